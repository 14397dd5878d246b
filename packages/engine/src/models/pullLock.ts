// One `models pull` per file at a time: two would append to, or truncate, the same NAME.gguf.partial. The lock
// file holds the owner's pid, so a lock left by a process that died (a crash, kill -9) is taken over.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { ModelPullError } from "../errors.js";

/** Takes `${partial}.lock`; returns the function that releases it. */
export function lockPull(partial: string, name: string): () => void {
  const lock = `${partial}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lock, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new ModelPullError(`cannot create ${lock}: ${(err as Error).message}`, false, { cause: err });
      }
      let owner = 0;
      try {
        owner = Number(readFileSync(lock, "utf8").trim());
      } catch {
        continue; // released between our open and this read: try again
      }
      if (Number.isInteger(owner) && owner > 0 && alive(owner)) {
        throw new ModelPullError(`another pull of ${name} is running (pid ${owner}); wait for it to finish, or remove ${lock} if that process is gone`, false);
      }
      rmSync(lock, { force: true }); // stale: its owner is gone
    }
  }
  throw new ModelPullError(`cannot take ${lock}; another pull keeps racing for it`, true);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
