import { createHash } from "node:crypto";
import { closeSync, existsSync, fsyncSync, openSync, readSync, renameSync, statSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import type { VectorIndex } from "./VectorIndex.js";

/** Identity of one saved vector file, recorded in SQLite so a file is only loaded if it is one we wrote. */
export interface VectorFileDigest {
  readonly sha256: string;
  readonly size: number;
}

/**
 * Saves the index next to `path` and returns the temp file and its digest; `commitVectorFile` then moves it
 * into place. Two steps so the caller can record the digest in SQLite before the rename (see ChunkStore.flush).
 * The temp file is fsynced, so after the rename the file is whole even after a power cut.
 */
export function writeVectorTempFile(index: VectorIndex, path: string): { tempPath: string; digest: VectorFileDigest } {
  const tempPath = `${path}.tmp-${process.pid}`;
  try {
    index.save(tempPath);
    fsyncFile(tempPath);
    return { tempPath, digest: digestFile(tempPath) };
  } catch (err) {
    removeIfPresent(tempPath);
    throw err;
  }
}

/** Atomic replace: readers see the old file or the new one, never a mix. The directory is fsynced so the rename itself survives. */
export function commitVectorFile(tempPath: string, path: string): void {
  renameSync(tempPath, path);
  fsyncFile(dirname(path));
}

/** sha256 and size of a file, read in 1 MiB blocks (bounded memory for large indexes). */
export function digestFile(path: string): VectorFileDigest {
  const hash = createHash("sha256");
  const block = Buffer.allocUnsafe(1 << 20);
  const fd = openSync(path, "r");
  let size = 0;
  try {
    for (let n = readSync(fd, block, 0, block.length, null); n > 0; n = readSync(fd, block, 0, block.length, null)) {
      hash.update(block.subarray(0, n));
      size += n;
    }
  } finally {
    closeSync(fd);
  }
  return { sha256: hash.digest("hex"), size };
}

export function fileSize(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

export function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

function fsyncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
