import { existsSync, readdirSync, renameSync } from "node:fs";
import { basename, join } from "node:path";
import type { Db } from "../sqlite/openDatabase.js";
import { deleteMeta, readMeta, writeMeta } from "../sqlite/meta.js";
import type { StoreFiles } from "../store/storeFiles.js";
import { digestFile, removeIfPresent, type VectorFileDigest } from "./vectorFile.js";
import { VectorIndex, type VectorIndexConfig } from "./VectorIndex.js";

export interface LoadedVectors {
  readonly index: VectorIndex;
  /** Why the file on disk was not used, and where it was moved; undefined when it was loaded (or absent). */
  readonly discarded?: string;
}

/**
 * Loads vectors.usearch if it is a file this store wrote: its digest must equal the one recorded for the
 * last save (or for the save in progress when a crash hit between writing the digest and the rename).
 * Anything else is moved aside and the store starts from an empty index, to be rebuilt from SQLite —
 * usearch would abort the process on a damaged file rather than throw.
 */
export function loadVectorFile(db: Db, files: StoreFiles, config: VectorIndexConfig): LoadedVectors {
  removeStaleTempFiles(files);
  if (!existsSync(files.vectors)) return { index: VectorIndex.empty(config) };

  const meta = readMeta(db);
  const actual = digestFile(files.vectors);
  const matches = (key: string) => {
    const recorded = meta.get(key);
    const digest = recorded === undefined ? undefined : (JSON.parse(recorded) as VectorFileDigest);
    return digest?.sha256 === actual.sha256 && digest.size === actual.size;
  };
  const isCurrent = matches("vector_file");
  const isNext = !isCurrent && matches("vector_file_next");
  if (!isCurrent && !isNext) {
    return { index: VectorIndex.empty(config), discarded: moveAside(files, "its checksum matches no save recorded in store.sqlite") };
  }
  try {
    const index = VectorIndex.load(files.vectors, config);
    // A crash hit after the rename: finish recording that save, so the next save's digest cannot
    // overwrite the only record of the file on disk.
    if (isNext) promoteNextDigest(db);
    return { index };
  } catch (err) {
    return { index: VectorIndex.empty(config), discarded: moveAside(files, `usearch could not load it (${(err as Error).message})`) };
  }
}

function promoteNextDigest(db: Db): void {
  db.transaction(() => {
    writeMeta(db, { vector_file: readMeta(db).get("vector_file_next")! });
    deleteMeta(db, "vector_file_next");
  })();
}

function moveAside(files: StoreFiles, reason: string): string {
  const target = `${files.vectors}.discarded-${Date.now()}`;
  renameSync(files.vectors, target);
  return `${files.vectors} was not used because ${reason}; moved to ${target} and the vectors are rebuilt from store.sqlite`;
}

/** Temp files of saves interrupted by a crash; never complete, never referenced. */
function removeStaleTempFiles(files: StoreFiles): void {
  const prefix = `${basename(files.vectors)}.tmp-`;
  for (const name of readdirSync(files.dir)) {
    if (name.startsWith(prefix)) removeIfPresent(join(files.dir, name));
  }
}
