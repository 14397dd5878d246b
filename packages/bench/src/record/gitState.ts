// Which commit a measurement ran at and whether the tree differed from it. Only tracked files count as
// "uncommitted changes": a results file just written, a model cache or a scratch folder beside the code does
// not change what ran, and counting them marked every bench run dirty.
import { spawnSync } from "node:child_process";

export interface GitState {
  commit: string | null;
  /** Uncommitted changes to tracked files (null: not a git checkout). */
  dirty: boolean | null;
}

export function gitState(cwd: string): GitState {
  const git = (...args: string[]) => {
    const r = spawnSync("git", args, { cwd, encoding: "utf8" });
    return r.status === 0 ? r.stdout.trim() : undefined;
  };
  const commit = git("rev-parse", "HEAD");
  const status = commit === undefined ? undefined : git("status", "--porcelain", "--untracked-files=no");
  return { commit: commit ?? null, dirty: status === undefined ? null : status !== "" };
}
