import { EmbeddingError, StoreError, VectorsIncompleteError } from "../errors.js";
import { embedTexts } from "../ingest/embedTexts.js";
import type { Db } from "../sqlite/openDatabase.js";
import type { StoreFiles } from "../store/storeFiles.js";
import type { EmbedderInfo, EmbedFunction, VectorRepairReport } from "../types.js";
import { saveVectorFile } from "./saveVectorFile.js";
import { VectorIndex, type VectorIndexConfig } from "./VectorIndex.js";
import type { VectorState } from "./vectorState.js";

/** Changes since the last save, as a share of the index, after which a save is due (see #dueForSave). */
const SAVE_GROWTH = 0.05;
/** Longest time a changed index goes unsaved while writes keep coming (see #dueForSave). */
const SAVE_INTERVAL_MS = 5 * 60_000;

export interface ChunkVectorsOptions {
  readonly saveEvery: number;
  readonly embedBatchSize: number;
}

/**
 * The in-memory vector index kept in step with SQLite: which live chunks lack a vector, whether the saved
 * file is out of date, when to save it. SQLite is the source of truth (see ChunkStore); this class only
 * mirrors committed writes into usearch and repairs the loaded index against `vector_state` on open.
 */
export class ChunkVectors {
  readonly #db: Db;
  readonly #files: StoreFiles;
  readonly #state: VectorState;
  readonly #config: VectorIndexConfig;
  readonly #options: ChunkVectorsOptions;
  #index: VectorIndex;
  /** Keys of live chunks that have no vector in memory. */
  readonly #missing = new Set<number>();
  /** The in-memory index differs from the saved file. */
  #dirty = false;
  #writesSinceSave = 0;
  /** Vectors added or removed since the last save. */
  #changesSinceSave = 0;
  #lastSaveAt = Date.now();
  #lastSaveError: string | undefined;

  constructor(db: Db, files: StoreFiles, state: VectorState, config: VectorIndexConfig, loaded: VectorIndex, options: ChunkVectorsOptions) {
    this.#db = db;
    this.#files = files;
    this.#state = state;
    this.#config = config;
    this.#index = loaded;
    this.#options = options;
  }

  /** The usearch index dense search reads. */
  get index(): VectorIndex {
    return this.#index;
  }

  get size(): number {
    return this.#index.size;
  }

  get missingCount(): number {
    return this.#missing.size;
  }

  get unsavedChanges(): boolean {
    return this.#dirty;
  }

  /** Why the last automatic save failed, until a save succeeds. */
  get lastSaveError(): string | undefined {
    return this.#lastSaveError;
  }

  /**
   * Open-time repair of the loaded index against vector_state: drop vectors of deleted chunks, note live
   * chunks without a vector. If the index holds vectors of keys SQLite does not know (which the save
   * protocol should make impossible) they cannot be named to remove them, so the index starts over.
   */
  reconcile(discarded: string | undefined): VectorRepairReport {
    const removedStale = this.#index.remove(this.#state.deletedKeys());
    const live = this.#state.liveKeys();
    const present = this.#index.contains(live);
    live.forEach((key, i) => {
      if (!present[i]) this.#missing.add(key);
    });
    const unknown = this.#index.size - (live.length - this.#missing.size);
    if (unknown !== 0) {
      discarded = `${this.#files.vectors} held ${unknown} vectors of unknown chunks; the index is rebuilt from store.sqlite`;
      this.#index = VectorIndex.empty(this.#config);
      for (const key of live) this.#missing.add(key);
    }
    if (removedStale > 0 || discarded !== undefined) this.#dirty = true;
    return { removedStale, rebuilt: 0, missing: this.#missing.size, ...(discarded !== undefined ? { discardedVectorFile: discarded } : {}) };
  }

  /** After a commit: mirror it in the in-memory index (synchronously, so no save can see half of it). */
  apply(removed: readonly number[], added: readonly number[], vectors: readonly Float32Array[]): void {
    for (const key of removed) this.#missing.delete(key);
    this.#index.remove(removed);
    try {
      this.#index.add(added, vectors);
    } catch (err) {
      for (const key of added) this.#missing.add(key);
      throw new StoreError(
        `the document was committed, but adding its ${added.length} vectors to the index failed (${(err as Error).message}); ` +
          `BM25 finds it, dense search needs rebuildVectors(embed)`,
        { cause: err },
      );
    } finally {
      this.#dirty = true;
      this.#writesSinceSave++;
      this.#changesSinceSave += added.length + removed.length;
    }
    if (this.#dueForSave()) {
      // The write itself is durable in SQLite already; a failed vector save only delays the file, so it is
      // reported in stats() rather than failing a write that succeeded. flush()/close() do throw.
      try {
        this.save();
      } catch (err) {
        this.#lastSaveError = (err as Error).message;
      }
    }
  }

  /** Embeds the chunks that have no vector, adds them and saves the file. */
  async rebuild(embed: EmbedFunction, embedder: EmbedderInfo): Promise<VectorRepairReport> {
    const keys = [...this.#missing].sort((a, b) => a - b);
    const batch = this.#options.embedBatchSize;
    let rebuilt = 0;
    for (let i = 0; i < keys.length; i += batch) {
      const rows = this.#state.texts(keys.slice(i, i + batch));
      const vectors = await embedTexts(embed, rows.map((r) => r.text), embedder, batch);
      // A chunk deleted (or already rebuilt) while embedding no longer needs its vector.
      const keep = rows.flatMap((r, j) => (this.#missing.has(r.key) ? [{ key: r.key, vector: vectors[j]! }] : []));
      this.#index.add(keep.map((e) => e.key), keep.map((e) => e.vector));
      for (const e of keep) this.#missing.delete(e.key);
      rebuilt += keep.length;
      if (keep.length > 0) this.#dirty = true;
    }
    this.save();
    return { removedStale: 0, rebuilt, missing: this.#missing.size };
  }

  /** The open-time rebuild, with an error that says how to open the store anyway. */
  async rebuildOnOpen(embed: EmbedFunction, embedder: EmbedderInfo): Promise<VectorRepairReport> {
    const count = this.#missing.size;
    return this.rebuild(embed, embedder).catch((err: unknown) => {
      throw new EmbeddingError(
        `opening ${this.#files.dir}: rebuilding ${count} missing vectors failed (${(err as Error).message}); ` +
          `fix the embedder, or open without { embed } to serve BM25 and call rebuildVectors() later`,
        { cause: err },
      );
    });
  }

  /**
   * A save writes the whole index, so saving every `saveEvery` writes made ingest slow down in proportion to
   * the store (1,020 chunks/s at 50 k chunks, 466 at 200 k). Past `saveEvery` writes a save also waits until
   * the changes are SAVE_GROWTH of the index, or SAVE_INTERVAL_MS have passed: each vector then pays a bounded
   * share of the saves at any size, and a crash re-embeds at most that share or that long of ingest (the
   * vectors are rebuilt from the committed chunks on open, as before).
   */
  #dueForSave(): boolean {
    if (this.#writesSinceSave < this.#options.saveEvery) return false;
    return this.#changesSinceSave >= SAVE_GROWTH * this.#index.size || Date.now() - this.#lastSaveAt >= SAVE_INTERVAL_MS;
  }

  /** Saves the vector file if it is out of date (atomically; see saveVectorFile). */
  save(): void {
    if (!this.#dirty) return;
    saveVectorFile(this.#db, this.#files.vectors, this.#index, this.#state, [...this.#missing]);
    this.#dirty = false;
    this.#writesSinceSave = 0;
    this.#changesSinceSave = 0;
    this.#lastSaveAt = Date.now();
    this.#lastSaveError = undefined;
  }

  /** Dense search cannot be trusted while live chunks lack vectors: say how many and what to do. */
  assertComplete(what: string, chunkCount: () => number): void {
    if (this.#missing.size > 0) {
      throw new VectorsIncompleteError(
        `${what}: ${this.#missing.size} of ${chunkCount()} chunks have no vector (lost in a crash before the vector file was saved); ` +
          `call rebuildVectors(embed) or open the store with { embed } — BM25 search works meanwhile`,
      );
    }
  }
}
