import type { Db } from "../sqlite/openDatabase.js";

/**
 * The `vector_state` table: which chunk rowids should have a vector, and whether the saved vector file
 * already reflects that. Rows are written by the chunk triggers (same transaction as the chunks); this
 * module only reads them and records saves.
 */
export class VectorState {
  readonly #live;
  readonly #deleted;
  readonly #markSaved;
  readonly #purgeDeleted;
  readonly #texts;

  constructor(db: Db) {
    this.#live = db.prepare<[], { key: number }>("SELECT key FROM vector_state WHERE state <> 'deleted' ORDER BY key");
    this.#deleted = db.prepare<[], { key: number }>("SELECT key FROM vector_state WHERE state = 'deleted' ORDER BY key");
    this.#markSaved = db.prepare<[string]>(
      "UPDATE vector_state SET state = 'saved' WHERE state = 'pending' AND key NOT IN (SELECT value FROM json_each(?))",
    );
    this.#purgeDeleted = db.prepare("DELETE FROM vector_state WHERE state = 'deleted'");
    this.#texts = db.prepare<[string], { key: number; text: string }>(
      "SELECT rowid AS key, text FROM chunks WHERE rowid IN (SELECT value FROM json_each(?)) ORDER BY rowid",
    );
  }

  /** Keys of existing chunks: each must have a vector. */
  liveKeys(): number[] {
    return this.#live.all().map((r) => r.key);
  }

  /** Keys of deleted chunks whose vectors may still be in the saved file. */
  deletedKeys(): number[] {
    return this.#deleted.all().map((r) => r.key);
  }

  /**
   * After the vector file was replaced: every pending key except `missing` (no vector in memory) is now in
   * the file, and no deleted key is. Call inside the transaction that also records the file's digest.
   */
  recordSave(missing: readonly number[]): void {
    this.#markSaved.run(JSON.stringify(missing));
    this.#purgeDeleted.run();
  }

  /** Texts of the chunks with these keys that still exist (a chunk deleted meanwhile is skipped). */
  texts(keys: readonly number[]): { key: number; text: string }[] {
    return this.#texts.all(JSON.stringify(keys));
  }
}
