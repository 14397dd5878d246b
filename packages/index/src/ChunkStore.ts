import { resolve } from "node:path";
import { chunkDocument, type Chunk } from "@attr-rag/core";
import { DocumentNotFoundError, InvalidDocumentError, InvalidQueryError, StoreClosedError, StoreError } from "./errors.js";
import { contentHash } from "./ingest/contentHash.js";
import { distinctRuns } from "./ingest/distinctRuns.js";
import { checkVectors, embedTexts } from "./ingest/embedTexts.js";
import { validateDocument } from "./ingest/validateDocument.js";
import { Bm25Search } from "./search/bm25Search.js";
import { ChunkTermCounts } from "./sqlite/chunkTermCounts.js";
import { Bm25TopK, type Bm25TopKTrace } from "./search/bm25TopK.js";
import { TermPostingsWriter } from "./sqlite/termPostings.js";
import { Bm25Pool, type Bm25PoolRequest } from "./search/bm25Pool.js";
import { DenseSearch } from "./search/denseSearch.js";
import { fuseHits, hybridCandidates } from "./search/fuseHits.js";
import { DEFAULT_FUSION, validateFusion, type FusionSettings } from "./search/fusionSettings.js";
import { hybridFusion } from "./search/hybridFusion.js";
import { MAX_K, validateCorpus, validateFilters, validateK, validateQueryText, validateQueryVector } from "./search/searchOptions.js";
import type { Bm25TermStats } from "./search/bm25Corpus.js";
import { TermStatsReader } from "./search/termStats.js";
import { ReplicaState } from "./sqlite/replicaState.js";
import { DocumentRows } from "./sqlite/documentRows.js";
import { migrate } from "./sqlite/migrations.js";
import { openDatabase, type Db } from "./sqlite/openDatabase.js";
import { loadOrInitConfig, readFusion, writeFusion, type StoreConfig } from "./sqlite/storeConfig.js";
import { prepareDirectory } from "./store/prepareDirectory.js";
import { storeFiles, type StoreFiles } from "./store/storeFiles.js";
import { StoreLock } from "./store/storeLock.js";
import { DEFAULT_EMBED_BATCH_SIZE, DEFAULT_SAVE_EVERY, validateOpenOptions } from "./store/validateOpenOptions.js";
import type {
  DocumentInput,
  EmbedderInfo,
  EmbedFunction,
  HybridSearchOptions,
  OpenStoreOptions,
  SearchHit,
  SearchOptions,
  StoredDocument,
  StoreStats,
  UpsertResult,
  VectorRepairReport,
} from "./types.js";
import { loadVectorFile } from "./vectors/loadVectorFile.js";
import { fileSize } from "./vectors/vectorFile.js";
import { ChunkVectors } from "./vectors/chunkVectors.js";
import type { VectorIndex, VectorIndexConfig } from "./vectors/VectorIndex.js";
import { countIngested } from "./indexMetrics.js";
import { VectorState } from "./vectors/vectorState.js";

/**
 * A durable chunk store in one directory: documents, chunks and an FTS5 index in SQLite (the source of
 * truth, every write one fsynced transaction), and a usearch HNSW index of chunk vectors in memory, saved
 * to `vectors.usearch` every `saveEvery` writes and on flush()/close().
 *
 * The vector file may lag SQLite (it is expensive to rewrite), so a crash can lose recent vectors or keep
 * vectors of deleted chunks. `vector_state` in SQLite records which keys must (not) be there, and open()
 * repairs the loaded index from it: stale vectors are removed, missing ones re-embedded from the chunk text
 * when an embed function is given. Without one the store still serves BM25, and dense search says what is
 * missing until `rebuildVectors()`.
 */
export class ChunkStore {
  readonly path: string;
  readonly embedder: EmbedderInfo;
  readonly #files: StoreFiles;
  readonly #lock: StoreLock;
  readonly #db: Db;
  readonly #config: StoreConfig;
  readonly #schemaVersion: number;
  readonly #rows: DocumentRows;
  readonly #bm25: Bm25Search;
  readonly #bm25TopK: Bm25TopK;
  readonly #termStats: TermStatsReader;
  readonly #postings: TermPostingsWriter;
  #pool: Bm25Pool | undefined;
  readonly #dense: DenseSearch;
  readonly #embedBatchSize: number;
  readonly #vectors: ChunkVectors;
  #repair: VectorRepairReport = { removedStale: 0, rebuilt: 0, missing: 0 };
  #storedFusion: { fusion?: FusionSettings; error?: string };
  readonly #inFlight = new Set<Promise<unknown>>();
  #rebuilding: Promise<VectorRepairReport> | undefined;
  #closing: Promise<void> | undefined;
  #replica: ReplicaState | undefined;

  private constructor(files: StoreFiles, lock: StoreLock, db: Db, config: StoreConfig, loaded: VectorIndex, schemaVersion: number, options: OpenStoreOptions) {
    this.path = files.dir;
    this.embedder = config.embedder;
    this.#files = files;
    this.#lock = lock;
    this.#db = db;
    this.#config = config;
    this.#schemaVersion = schemaVersion;
    this.#rows = new DocumentRows(db);
    this.#bm25 = new Bm25Search(db);
    this.#bm25TopK = new Bm25TopK(db, this.#bm25, { ownScan: options.bm25OwnScan });
    this.#termStats = new TermStatsReader(db);
    this.#postings = new TermPostingsWriter(db, options.postingsBatch);
    this.#dense = new DenseSearch(db);
    this.#embedBatchSize = options.embedBatchSize ?? DEFAULT_EMBED_BATCH_SIZE;
    this.#vectors = new ChunkVectors(db, files, new VectorState(db), vectorConfig(config), loaded, {
      saveEvery: options.saveEvery ?? DEFAULT_SAVE_EVERY,
      embedBatchSize: this.#embedBatchSize,
    });
    this.#storedFusion = readFusion(db, files.dir);
  }

  /**
   * Opens (or with `create`, creates) the store in `dir`, takes its lock, migrates the schema, checks the
   * embedder and repairs the vector index (see the class comment). Throws StoreNotFoundError,
   * StoreLockedError, EmbedderMismatchError or StoreError; on error nothing stays open or locked.
   */
  static async open(dir: string, options: OpenStoreOptions = {}): Promise<ChunkStore> {
    validateOpenOptions(options);
    const files = storeFiles(resolve(dir));
    prepareDirectory(files, options.create ?? false, options.embedder !== undefined);
    const lock = StoreLock.acquire(files.lock, files.dir);
    let db: Db | undefined;
    try {
      db = openDatabase(files.sqlite, files.dir);
      const schemaVersion = migrate(db, files.dir);
      new ChunkTermCounts(db).backfill((done, total) => options.onProgress?.(`recording the token counts of older chunks for BM25: ${done}/${total}`));
      new TermPostingsWriter(db, options.postingsBatch).flush({ progress: (done, total) => options.onProgress?.(`writing BM25 postings of older chunks: ${done}/${total}`) });
      const config = loadOrInitConfig(db, options, files.dir);
      const loaded = loadVectorFile(db, files, vectorConfig(config));
      const store = new ChunkStore(files, lock, db, config, loaded.index, schemaVersion, options);
      store.#repair = store.#vectors.reconcile(loaded.discarded);
      if (options.embed && store.#vectors.missingCount > 0) {
        const { rebuilt, missing } = await store.#vectors.rebuildOnOpen(options.embed, store.embedder);
        store.#repair = { ...store.#repair, rebuilt, missing };
      } else {
        store.#vectors.save();
      }
      return store;
    } catch (err) {
      db?.close();
      lock.release();
      throw err;
    }
  }

  /** What open() found and repaired in the vector index. */
  get repairReport(): VectorRepairReport {
    return this.#repair;
  }

  /**
   * Adds or replaces a document. Chunks it, embeds the chunks, then writes document, chunks and FTS rows
   * in one transaction (a replaced document's old rows go in the same transaction), and only then adds the
   * vectors to the in-memory index. Once this resolves the document is durable.
   */
  async upsertDocument(doc: DocumentInput, embed: EmbedFunction): Promise<UpsertResult> {
    return (await this.#upsertDocuments([doc], embed, "upsertDocument"))[0]!;
  }

  /**
   * upsertDocument for many documents at once, with one result per document in the same order: they are
   * embedded together and written in one transaction, which costs far less per document than one transaction
   * each. All are validated first. Documents with distinct ids are one run, all written or none (an embedding
   * failure writes nothing); a repeated id starts another run, and a failing run leaves the runs before it
   * written.
   */
  upsertDocuments(docs: readonly DocumentInput[], embed: EmbedFunction, options: WriteOptions = {}): Promise<UpsertResult[]> {
    return this.#upsertDocuments(docs, embed, "upsertDocuments", options);
  }

  async #upsertDocuments(docs: readonly DocumentInput[], embed: EmbedFunction, what: string, options: WriteOptions = {}): Promise<UpsertResult[]> {
    this.#assertOpen(what);
    if (!Array.isArray(docs)) throw new InvalidDocumentError(`${what}: expected an array of documents`);
    docs.forEach(validateDocument);
    if (typeof embed !== "function") throw new StoreError(`${what}: embed must be a function (texts) => Promise<Float32Array[]>`);
    const sequence = validSequence(options.appliedSequence, what);
    return this.#track(this.#upsertAll(docs, embed, sequence));
  }

  async #upsertAll(docs: readonly DocumentInput[], embed: EmbedFunction, sequence: number | undefined): Promise<UpsertResult[]> {
    const results: UpsertResult[] = [];
    const runs = distinctRuns(docs, (d) => d.id);
    // The sequence commits with the last run: the data it names is all written then.
    for (const [i, run] of runs.entries()) results.push(...(await this.#upsertRun(run, embed, i === runs.length - 1 ? sequence : undefined)));
    if (runs.length === 0 && sequence !== undefined) this.replica.applied = sequence;
    countIngested(results);
    return results;
  }

  /**
   * The chunk texts this store makes of a document (its chunker): what a writer embeds once for every
   * replica (DocumentInput.vectors).
   */
  chunkTexts(docId: string, text: string): string[] {
    this.#assertOpen("chunkTexts");
    return chunkDocument(docId, text, this.#config.chunker).map((c) => c.text);
  }

  /** The chunker's settings as one string ("recursive max=1000 overlap=0"): replicas chunk alike when equal. */
  get splitter(): string {
    return splitterOf(this.#config.chunker);
  }

  /** Documents with distinct ids: embedded together, written in one transaction (or not at all). */
  async #upsertRun(docs: readonly DocumentInput[], embed: EmbedFunction, sequence: number | undefined, attempt = 1): Promise<UpsertResult[]> {
    // Planned without writing anything: a document with the text already stored needs no chunks or vectors.
    const planned = docs.map((doc, i) => {
      const hash = contentHash(doc.text, this.#config.chunker);
      const same = this.#rows.get(doc.id)?.contentHash === hash;
      const chunks = same ? undefined : chunkDocument(doc.id, doc.text, this.#config.chunker);
      // Vectors the caller made for exactly these chunks are taken as given (checked like any embedder's).
      const given = chunks !== undefined && doc.vectors !== undefined && doc.vectors.length === chunks.length ? checkVectors(doc.vectors, this.embedder) : undefined;
      return { i, doc, hash, chunks, given };
    });
    const texts = planned.flatMap((p) => (p.given === undefined ? (p.chunks?.map((chunk) => chunk.text) ?? []) : []));
    const vectors = await embedTexts(embed, texts, this.embedder, this.#embedBatchSize);
    let at = 0;
    const withVectors = planned.map((p) => ({ ...p, vectors: p.given ?? vectors.slice(at, (at += p.chunks?.length ?? 0)) }));

    const outcome = this.#db.transaction(() => {
      // Another upsert of the same id may have committed while this one was embedding. One planned as same text
      // that is not any more has no vectors: nothing is written, and the run is planned again.
      if (withVectors.some((p) => p.chunks === undefined && this.#rows.get(p.doc.id)?.contentHash !== p.hash)) return undefined;
      const results: UpsertResult[] = [];
      const removed: number[] = [];
      const write: { doc: DocumentInput; hash: string; chunks: Chunk[]; vectors: Float32Array[] }[] = [];
      for (const p of withVectors) {
        const current = this.#rows.get(p.doc.id);
        if (current?.contentHash === p.hash) {
          results[p.i] = this.#keepChunks(p.doc);
          continue;
        }
        if (current) {
          removed.push(...this.#rows.chunkKeys(p.doc.id));
          this.#rows.delete(p.doc.id);
        }
        results[p.i] = { status: current ? "replaced" : "indexed", chunkCount: p.chunks!.length };
        write.push({ doc: p.doc, hash: p.hash, chunks: p.chunks!, vectors: p.vectors });
      }
      const keys = this.#rows.insertAll(write.map((w) => ({ doc: { ...documentFields(w.doc), contentHash: w.hash, textLength: w.doc.text.length }, chunks: w.chunks })));
      if (sequence !== undefined) this.replica.applied = sequence;
      return { results, removed, added: keys.flat(), vectors: write.flatMap((w) => w.vectors) };
    })();
    if (outcome === undefined) {
      if (attempt < 3) return this.#upsertRun(docs, embed, sequence, attempt + 1);
      throw new StoreError(`documents ${docs.map((d) => JSON.stringify(d.id)).join(", ")} kept changing while they were written (another writer); nothing was stored — try again`);
    }
    if (outcome.added.length > 0 || outcome.removed.length > 0) this.#vectors.apply(outcome.removed, outcome.added, outcome.vectors);
    if (outcome.added.length > 0) this.#flushPostings();
    return outcome.results;
  }

  /**
   * Writes the BM25 postings batches now due. After the chunks' own commit, so a failure here loses nothing
   * (the postings are derived, and searches score unbatched chunks from their token counts): it is tried
   * again after the next write and at open.
   */
  #flushPostings(): void {
    try {
      this.#postings.flush();
    } catch {
      // Retried later; see above.
    }
  }

  /** Same content hash: keep the chunks; rewrite the document row only if its metadata changed. */
  #keepChunks(doc: DocumentInput): UpsertResult {
    const current = this.#rows.get(doc.id)!;
    const same = current.title === doc.title && current.source === doc.source && current.license === doc.license;
    if (!same) this.#rows.updateMetadata(doc);
    return { status: same ? "unchanged" : "updated", chunkCount: current.chunkCount };
  }

  /**
   * Removes the document with its chunks, FTS rows and vectors. Throws DocumentNotFoundError if absent (with
   * `appliedSequence`, the sequence is recorded all the same).
   */
  deleteDocument(id: string, options: WriteOptions = {}): void {
    this.#assertOpen("deleteDocument");
    if (typeof id !== "string" || id.length === 0) throw new InvalidDocumentError("deleteDocument: id must be a non-empty string");
    const sequence = validSequence(options.appliedSequence, "deleteDocument");
    const removed = this.#db.transaction(() => {
      const keys = this.#rows.chunkKeys(id);
      const found = this.#rows.delete(id);
      if (sequence !== undefined) this.replica.applied = sequence;
      return found ? keys : undefined;
    })();
    if (removed === undefined) throw new DocumentNotFoundError(id, "deleteDocument");
    this.#vectors.apply(removed, [], []);
  }

  getDocument(id: string): StoredDocument | undefined {
    this.#assertOpen("getDocument");
    return this.#rows.get(id);
  }

  /**
   * Chunks of `docId` with firstOrdinal ≤ ordinal ≤ lastOrdinal, in order (gap fill). Ordinals past the
   * document's end are simply absent (a range entirely past it gives []); an unknown document is
   * DocumentNotFoundError, and a malformed range (negative, non-integer, first > last) InvalidQueryError.
   */
  getChunks(docId: string, firstOrdinal: number, lastOrdinal: number): Chunk[] {
    this.#assertOpen("getChunks");
    if (typeof docId !== "string" || docId.length === 0) throw new InvalidQueryError("getChunks: docId must be a non-empty string");
    for (const [name, value] of [["firstOrdinal", firstOrdinal], ["lastOrdinal", lastOrdinal]] as const) {
      if (!Number.isInteger(value) || value < 0) throw new InvalidQueryError(`getChunks: ${name} must be an integer ≥ 0, got ${String(value)}`);
    }
    if (firstOrdinal > lastOrdinal) {
      throw new InvalidQueryError(`getChunks: firstOrdinal (${firstOrdinal}) is after lastOrdinal (${lastOrdinal}); the range is inclusive, first ≤ last`);
    }
    if (!this.#rows.get(docId)) throw new DocumentNotFoundError(docId, "getChunks");
    return this.#rows.range(docId, firstOrdinal, lastOrdinal);
  }

  /** BM25 over chunk text. The query is free text: FTS5 operators in it are treated as words. */
  searchBm25(query: string, options: SearchOptions): SearchHit[] {
    const r = this.#bm25Request(query, options, "searchBm25");
    return this.#bm25Search(r);
  }

  /**
   * searchBm25 on a search thread when the store has them (useSearchThreads), so the caller's event loop is
   * free meanwhile and searches run in parallel; the same hits as searchBm25.
   */
  async searchBm25Async(query: string, options: SearchOptions): Promise<SearchHit[]> {
    const r = this.#bm25Request(query, options, "searchBm25");
    return this.#pool === undefined ? this.#bm25Search(r) : this.#pool.search(r);
  }

  /**
   * searchBm25Async with the ingest log sequence (ReplicaState.applied) of the data it searched, read in the
   * same snapshot: a replica's answer says which version it is, even when a search thread ran it.
   */
  async searchBm25AtVersion(query: string, options: SearchOptions): Promise<{ hits: SearchHit[]; version: number }> {
    const r = this.#bm25Request(query, options, "searchBm25");
    if (this.#pool !== undefined) return this.#pool.searchAtVersion(r);
    // On this thread the search runs to its end before anything else: no write lands in between.
    const version = this.replica.applied;
    return { hits: this.#bm25Search(r), version };
  }

  /**
   * Runs BM25 searches on `threads` worker threads from now on (searchBm25Async, searchHybridAsync), each with
   * its own read-only SQLite connection. 0 stops them (searches run on the caller's thread again).
   */
  async useSearchThreads(threads: number): Promise<void> {
    this.#assertOpen("useSearchThreads");
    if (!Number.isInteger(threads) || threads < 0) throw new StoreError(`useSearchThreads: threads must be an integer ≥ 0, got ${threads}`);
    const old = this.#pool;
    this.#pool = threads === 0 ? undefined : new Bm25Pool(this.#files.sqlite, threads);
    await old?.close();
  }

  #bm25Request(query: string, options: SearchOptions, what: string): Bm25PoolRequest {
    this.#assertOpen(what);
    const k = validateK(options?.k, what);
    const method = validBm25Method(options, what);
    const corpus = options.corpus === undefined ? undefined : validateCorpus(options.corpus, what);
    if (corpus !== undefined && method === "exhaustive") throw new InvalidQueryError(`${what}: corpus statistics need bm25Method "topk" (FTS5's exhaustive ranking reads the store's own)`);
    return { query: validateQueryText(query, what), k, filters: validateFilters(options, what), method, ...(corpus !== undefined ? { corpus } : {}) };
  }

  #bm25Search(r: Bm25PoolRequest): SearchHit[] {
    return r.method === "topk" ? this.#bm25TopK.search(r.query, r.k, r.filters, r.corpus) : this.#bm25.search(r.query, r.k, r.filters);
  }

  /**
   * The store's BM25 figures for a query's tokens (rows, tokens, each token's document frequency): a shard's
   * part of the corpus-wide statistics a sharded index ranks with (see Bm25Corpus).
   */
  termStats(query: string): Bm25TermStats & { version: number } {
    const what = "termStats";
    this.#assertOpen(what);
    // The version first: a write landing between the two makes the figures newer than it says, never older,
    // and a check against the newer version then finds them stale and counts again.
    const version = this.replica.applied;
    return { ...this.#termStats.of(validateQueryText(query, what)), version };
  }

  /** Cosine nearest neighbours of a query vector made by the store's embedder. */
  searchDense(queryVector: Float32Array, options: SearchOptions): SearchHit[] {
    const what = "searchDense";
    this.#assertOpen(what);
    const k = validateK(options?.k, what);
    const vector = validateQueryVector(queryVector, this.embedder.dimensions, this.embedder.id, what);
    this.#vectors.assertComplete(what, () => this.#rows.counts().chunks);
    return this.#dense.search(this.#vectors.index, vector, k, validateFilters(options, what));
  }

  /**
   * BM25 (on `query`) and dense (on `queryVector`) rankings fused: by `options.fusion`, by RRF when the call
   * gives `rrfK`/`bm25Weight`, else by the store's fusion (see HybridSearchOptions).
   */
  searchHybrid(query: string, queryVector: Float32Array, options: HybridSearchOptions): SearchHit[] {
    const h = this.#hybridRequest(query, queryVector, options);
    const bm25 = this.#bm25Search(h.bm25);
    return fuseHits(bm25, this.#dense.search(this.#vectors.index, h.vector, h.bm25.k, h.bm25.filters), h.k, h.fusion);
  }

  /** searchHybrid with its BM25 half on a search thread when the store has them (dense search is fast and stays here). */
  async searchHybridAsync(query: string, queryVector: Float32Array, options: HybridSearchOptions): Promise<SearchHit[]> {
    const h = this.#hybridRequest(query, queryVector, options);
    if (this.#pool === undefined) return this.searchHybrid(query, queryVector, options);
    const bm25 = this.#pool.search(h.bm25);
    const dense = this.#dense.search(this.#vectors.index, h.vector, h.bm25.k, h.bm25.filters);
    return fuseHits(await bm25, dense, h.k, h.fusion);
  }

  #hybridRequest(query: string, queryVector: Float32Array, options: HybridSearchOptions) {
    const what = "searchHybrid";
    this.#assertOpen(what);
    const k = validateK(options?.k, what);
    const candidates = options.candidates === undefined ? Math.min(MAX_K, hybridCandidates(k)) : validateK(options.candidates, what, "candidates");
    const fusion = hybridFusion(options, () => this.fusion, this.#storedFusion.fusion, what);
    const text = validateQueryText(query, what);
    const vector = validateQueryVector(queryVector, this.embedder.dimensions, this.embedder.id, what);
    const filters = validateFilters(options, what);
    this.#vectors.assertComplete(what, () => this.#rows.counts().chunks);
    const bm25: Bm25PoolRequest = { query: text, k: candidates, filters, method: validBm25Method(options, what) };
    return { k, fusion, vector, bm25 };
  }

  #bm25Method(method: "topk" | "exhaustive"): Bm25Search | Bm25TopK {
    return method === "topk" ? this.#bm25TopK : this.#bm25;
  }

  /** How the last top-k BM25 search went (FTS5 passes, phrases bounded, rows completed): for tests and benchmarks. */
  get lastBm25Trace(): Bm25TopKTrace {
    return this.#bm25TopK.lastTrace;
  }

  /** The fusion searchHybrid uses when a call names none: the one recorded by setFusion, else DEFAULT_FUSION. */
  get fusion(): FusionSettings {
    this.#assertOpen("fusion");
    if (this.#storedFusion.error !== undefined) throw new StoreError(this.#storedFusion.error);
    return this.#storedFusion.fusion ?? DEFAULT_FUSION;
  }

  /** The store as a replica of a replicated index: its id, its shard, the ingest log entries it applied. */
  get replica(): ReplicaState {
    this.#assertOpen("replica");
    return (this.#replica ??= new ReplicaState(this.#db));
  }

  /** The fusion a hybrid search with these options would use (see HybridSearchOptions). */
  fusionFor(options: Pick<HybridSearchOptions, "fusion" | "rrfK" | "bm25Weight">): FusionSettings {
    this.#assertOpen("fusionFor");
    return hybridFusion(options as HybridSearchOptions, () => this.fusion, this.#storedFusion.fusion, "searchHybrid");
  }

  /** Whether the store records its own fusion (false: DEFAULT_FUSION applies). */
  get hasRecordedFusion(): boolean {
    this.#assertOpen("hasRecordedFusion");
    return this.#storedFusion.fusion !== undefined || this.#storedFusion.error !== undefined;
  }

  /**
   * Records the fusion hybrid search uses by default on this store, from now on and after reopening (all
   * readers of the store directory: ask, search, serve); undefined removes it, so DEFAULT_FUSION applies.
   */
  setFusion(fusion: FusionSettings | undefined): void {
    const what = "setFusion";
    this.#assertOpen(what);
    const valid = fusion === undefined ? undefined : validateFusion(fusion, what);
    writeFusion(this.#db, valid);
    this.#storedFusion = valid === undefined ? {} : { fusion: valid };
  }

  stats(): StoreStats {
    this.#assertOpen("stats");
    const counts = this.#rows.counts();
    return {
      path: this.path,
      schemaVersion: this.#schemaVersion,
      documents: counts.documents,
      chunks: counts.chunks,
      embedder: this.embedder,
      dimensions: this.embedder.dimensions,
      quantization: this.#config.quantization,
      chunker: this.#config.chunker,
      vectors: this.#vectors.size,
      missingVectors: this.#vectors.missingCount,
      unsavedVectorChanges: this.#vectors.unsavedChanges,
      files: { sqlite: fileSize(this.#files.sqlite), wal: fileSize(`${this.#files.sqlite}-wal`), vectors: fileSize(this.#files.vectors) },
      ...(this.#vectors.lastSaveError !== undefined ? { lastVectorSaveError: this.#vectors.lastSaveError } : {}),
    };
  }

  /**
   * Embeds the chunks that have no vector (after a crash, when the store was opened without `embed`) and
   * saves the vector file. Concurrent calls share one run.
   */
  rebuildVectors(embed: EmbedFunction): Promise<VectorRepairReport> {
    this.#assertOpen("rebuildVectors");
    if (typeof embed !== "function") throw new StoreError("rebuildVectors: embed must be a function (texts) => Promise<Float32Array[]>");
    this.#rebuilding ??= this.#track(this.#vectors.rebuild(embed, this.embedder)).finally(() => {
      this.#rebuilding = undefined;
    });
    return this.#rebuilding;
  }

  /** Saves the vector file now if it is out of date (atomically; see saveVectorFile). */
  flush(): void {
    this.#assertOpen("flush");
    this.#vectors.save();
  }

  /** Waits for running writes, saves the vector file, closes SQLite and releases the lock. Repeat-safe. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #close(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
    await this.#pool?.close();
    try {
      this.#vectors.save();
    } finally {
      this.#db.close();
      this.#lock.release();
    }
  }

  #assertOpen(what: string): void {
    if (this.#closing) throw new StoreClosedError(what);
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#inFlight.add(work);
    const forget = () => this.#inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }
}

function vectorConfig(config: StoreConfig): VectorIndexConfig {
  return { dimensions: config.embedder.dimensions, quantization: config.quantization, hnsw: config.hnsw };
}

function validBm25Method(options: SearchOptions, what: string): "topk" | "exhaustive" {
  const method = options?.bm25Method ?? "topk";
  if (method === "topk" || method === "exhaustive") return method;
  throw new InvalidQueryError(`${what}: bm25Method must be "topk" or "exhaustive", got ${JSON.stringify(method)}`);
}

/** A write's options for a replica (see ReplicaState). */
export interface WriteOptions {
  /** The ingest log sequence this write applies: recorded in the write's own transaction. */
  readonly appliedSequence?: number;
}

function validSequence(sequence: number | undefined, what: string): number | undefined {
  if (sequence !== undefined && (!Number.isSafeInteger(sequence) || sequence < 1)) throw new StoreError(`${what}: appliedSequence must be a positive integer, got ${String(sequence)}`);
  return sequence;
}

/** The document's own fields (not the vectors a caller may have attached). */
function documentFields(doc: DocumentInput): DocumentInput {
  const { vectors: _, ...fields } = doc;
  return fields;
}

export function splitterOf(chunker: { readonly maxChars: number; readonly overlapChars: number }): string {
  return `recursive max=${chunker.maxChars} overlap=${chunker.overlapChars}`;
}
