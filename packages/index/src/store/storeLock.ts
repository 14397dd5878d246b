import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { StoreError, StoreLockedError } from "../errors.js";

/**
 * One writer per store: the vector file is rewritten whole from memory, so two processes with the same
 * store open would silently drop each other's vectors. The lock file holds the owner's pid; a lock left
 * behind by a dead process (kill -9) is taken over, which is what makes crash recovery automatic.
 */
export class StoreLock {
  #released = false;

  private constructor(readonly path: string) {}

  static acquire(path: string, storeDir: string): StoreLock {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, "wx");
        try {
          writeSync(fd, `${process.pid}\n`);
        } finally {
          closeSync(fd);
        }
        return new StoreLock(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
          throw new StoreError(`cannot create the lock file ${path}: ${(err as Error).message}; check the directory's permissions`, { cause: err });
        }
      }
      const owner = readOwner(path);
      if (owner !== undefined && isAlive(owner)) {
        const who = owner === process.pid ? "this process already has it open (close the other handle first)" : `process ${owner} has it open`;
        throw new StoreLockedError(`store ${storeDir} is in use: ${who}; only one writer may open a store at a time`);
      }
      // The owner is gone (crashed): remove its lock and try once more; losing that race to another
      // process that is also recovering is reported as locked on the next loop.
      try {
        unlinkSync(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw new StoreError(`cannot remove the stale lock ${path}: ${(err as Error).message}`, { cause: err });
      }
    }
    throw new StoreLockedError(`store ${storeDir} is in use: another process took its lock while this one was recovering a stale lock`);
  }

  /** Repeat-safe. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    try {
      if (readOwner(this.path) === process.pid) unlinkSync(this.path);
    } catch {
      // Already gone: nothing to release.
    }
  }
}

function readOwner(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
