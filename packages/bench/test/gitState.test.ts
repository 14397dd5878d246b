import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gitState } from "../src/record/gitState.js";

// Run from a git hook, GIT_DIR and friends would point every git call (gitState's too) at another repository.
for (const name of Object.keys(process.env)) if (name.startsWith("GIT_")) delete process.env[name];

// A bench report's run record says whether the tree had uncommitted changes; only tracked files count.
describe("bench run record: commit and dirty flag", () => {
  let dir: string;
  const git = (...args: string[]) => {
    const r = spawnSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false", ...args], { cwd: dir, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout.trim();
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "attr-rag-git-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("runRecord - untracked files leave the tree clean; a changed tracked file makes it dirty", () => {
    git("init", "-q");
    writeFileSync(join(dir, "code.ts"), "export const a = 1;\n");
    git("add", "code.ts");
    git("commit", "-q", "-m", "first");
    const head = git("rev-parse", "HEAD");
    expect(gitState(dir)).toEqual({ commit: head, dirty: false });

    // What a bench run leaves beside the code: a fresh results file, a cache folder.
    writeFileSync(join(dir, "result.json"), "{}\n");
    expect(gitState(dir)).toEqual({ commit: head, dirty: false });

    writeFileSync(join(dir, "code.ts"), "export const a = 2;\n");
    expect(gitState(dir)).toEqual({ commit: head, dirty: true });

    // Staged but not committed is still a change to what ran.
    git("add", "code.ts");
    expect(gitState(dir).dirty).toBe(true);
    git("commit", "-q", "-m", "second");
    expect(gitState(dir)).toEqual({ commit: git("rev-parse", "HEAD"), dirty: false });
  });

  it("runRecord - outside a git checkout there is no commit and no dirty flag", () => {
    expect(gitState(dir)).toEqual({ commit: null, dirty: null });
  });
});
