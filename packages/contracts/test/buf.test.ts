import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROTOS_DIR, ToolchainError, resolveBin, runBuf } from "../scripts/toolchain.mjs";

describe("buf", () => {
  it("buf - lint passes on protos/ (STANDARD + COMMENTS, streaming RPCs included)", () => {
    const result = runBuf(["lint"]);
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("buf - protos are buf-formatted", () => {
    const result = runBuf(["format", "--diff", "--exit-code"]);
    expect(result.stdout).toBe("");
    expect(result.status).toBe(0);
  });

  it("buf - lint rejects a field without a comment", () => {
    const dir = mkdtempSync(join(tmpdir(), "attr-rag-protos-"));
    try {
      cpSync(PROTOS_DIR, dir, { recursive: true });
      const file = join(dir, "attr_rag", "v1", "chunk.proto");
      const text = readFileSync(file, "utf8");
      const stripped = text.replace("  // Id of the document the chunk belongs to.\n", "");
      expect(stripped).not.toBe(text);
      writeFileSync(file, stripped);

      const result = runBuf(["lint"], { cwd: dir });
      expect(result.status).not.toBe(0);
      expect(result.stdout).toMatch(/chunk\.proto:\d+:\d+:Field "doc_id" should have a non-empty comment/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("toolchain - a missing tool fails with the package to install", () => {
    expect(() => resolveBin("@attr-rag/no-such-tool", "no-such-bin")).toThrow(ToolchainError);
    expect(() => resolveBin("@attr-rag/no-such-tool", "no-such-bin")).toThrow(/@attr-rag\/no-such-tool is not installed.*npm ci/);
  });
});
