import { join } from "node:path";

/** The files of a store directory. One place, so every module agrees on the layout. */
export interface StoreFiles {
  readonly dir: string;
  /** Documents, chunks, FTS5 index, meta and vector bookkeeping. */
  readonly sqlite: string;
  /** The usearch HNSW index, replaced atomically (temp file + rename) on every save. */
  readonly vectors: string;
  /** Holds the pid of the process that has the store open. */
  readonly lock: string;
}

export function storeFiles(dir: string): StoreFiles {
  return {
    dir,
    sqlite: join(dir, "store.sqlite"),
    vectors: join(dir, "vectors.usearch"),
    lock: join(dir, "LOCK"),
  };
}
