import { deleteMeta, writeMeta } from "../sqlite/meta.js";
import type { Db } from "../sqlite/openDatabase.js";
import { commitVectorFile, removeIfPresent, writeVectorTempFile } from "./vectorFile.js";
import type { VectorIndex } from "./VectorIndex.js";
import type { VectorState } from "./vectorState.js";

/**
 * Replaces vectors.usearch with the in-memory index, crash-safe at every step:
 * 1. write + fsync a temp file;                  crash → old file still current, temp removed on open;
 * 2. record its digest as `vector_file_next`;    crash → old file still matches `vector_file`;
 * 3. rename over vectors.usearch + fsync dir;    crash → new file matches `vector_file_next`, its pending
 *                                                 keys are found present on open, deleted keys removed again;
 * 4. one transaction: promote the digest, mark pending keys saved, forget deleted keys (they are not in the new file).
 * `missing` lists keys that have no vector in memory, so they stay pending.
 */
export function saveVectorFile(db: Db, path: string, index: VectorIndex, state: VectorState, missing: readonly number[]): void {
  const { tempPath, digest } = writeVectorTempFile(index, path);
  try {
    writeMeta(db, { vector_file_next: JSON.stringify(digest) });
    commitVectorFile(tempPath, path);
  } catch (err) {
    removeIfPresent(tempPath);
    throw err;
  }
  db.transaction(() => {
    writeMeta(db, { vector_file: JSON.stringify(digest) });
    deleteMeta(db, "vector_file_next");
    state.recordSave(missing);
  })();
}
