import type { ChunkerOptions } from "@attr-rag/core";
import type { Bm25Corpus } from "./search/bm25Corpus.js";
import type { FusionSettings } from "./search/fusionSettings.js";

/** Which embedder built (or queries) a store. Vectors of different embedders are never mixed. */
export interface EmbedderInfo {
  /** Stable name of the model and its settings, e.g. "use-lite-512" or "gguf:bge-small-en-v1.5". */
  readonly id: string;
  readonly dimensions: number;
}

/**
 * Turns texts into vectors, one per text, in order, each `dimensions` long. The store calls it in
 * batches; how the embedder batches further (and keeps work off the event loop) is its own business.
 */
export type EmbedFunction = (texts: readonly string[]) => Promise<Float32Array[]>;

/** Element type of the stored vectors: f16 halves the vector file at a small recall cost. */
export type VectorQuantization = "f32" | "f16";

export interface OpenStoreOptions {
  /** Create the directory and an empty store when there is none. Default false. */
  readonly create?: boolean;
  /**
   * The embedder queries and new documents will use. Required to create a store; when opening an
   * existing one it is checked against the recorded embedder (EmbedderMismatchError), and may be omitted
   * to use the recorded one (e.g. for BM25-only access).
   */
  readonly embedder?: EmbedderInfo;
  /**
   * Used on open to rebuild vectors lost in a crash (chunks committed to SQLite whose vectors were not yet
   * saved). Without it the store still opens and serves BM25; dense search then needs `rebuildVectors()`.
   */
  readonly embed?: EmbedFunction;
  /** Chunker settings, fixed when the store is created (recorded in meta; a different value later is an error). */
  readonly chunker?: ChunkerOptions;
  /** Vector element type, fixed at creation. Default "f16" (stores created before that default keep "f32"). */
  readonly quantization?: VectorQuantization;
  /** Save the vector file after this many document writes (it is always saved on flush() and close()). Default 100. */
  readonly saveEvery?: number;
  /** Texts per embed call during ingestion and repair. Default 64. */
  readonly embedBatchSize?: number;
  /**
   * Chunks per batch of BM25 postings (term_postings), written once that many have committed; searches score
   * the chunks of an unfinished batch from their token counts. Default 8192; small values are for tests.
   */
  readonly postingsBatch?: number;
  /**
   * Unfiltered BM25 queries whose less common words have at most this many postings score them all instead of
   * pruning (default 150,000); tests set 0 to take the pruning path on small corpora (0 also keeps a query on
   * that path when completing its rows would cost more than scoring every posting).
   */
  readonly bm25OwnScan?: number;
  /**
   * Told about long work at open: recording the token counts of a store made before they were kept (once per
   * store; about a minute per 100,000 chunks on two cores).
   */
  readonly onProgress?: (line: string) => void;
}

/** One document to ingest (SPEC section 5 `corpus.jsonl` fields). */
export interface DocumentInput {
  readonly id: string;
  readonly text: string;
  readonly title?: string;
  readonly source?: string;
  readonly license?: string;
  /**
   * The chunks' vectors, made elsewhere by this store's embedder for the chunks this store makes of `text`
   * (ChunkStore.chunkTexts): one per chunk, in order. Taken as given (checked as an embedder's are), so
   * replicas fed the same vectors store the same bytes; with any other count the chunks are embedded.
   */
  readonly vectors?: readonly Float32Array[];
  /**
   * When the write happened (ISO 8601), stored as the document's ingestedAt; now when absent. A replica passes
   * its log entry's time, so every replica stores the same row.
   */
  readonly ingestedAt?: string;
}

/**
 * - `indexed`: a new document.
 * - `replaced`: the text (or chunker) changed; old chunks and vectors were swapped for new ones atomically.
 * - `unchanged`: same content hash and metadata; nothing was written.
 * - `updated`: same content hash, but title/source/license changed; only the document row was rewritten.
 */
export type UpsertStatus = "indexed" | "replaced" | "unchanged" | "updated";

export interface UpsertResult {
  readonly status: UpsertStatus;
  readonly chunkCount: number;
}

export interface StoredDocument {
  readonly id: string;
  readonly title: string | undefined;
  readonly source: string | undefined;
  readonly license: string | undefined;
  /** `sha256:<hex>` of the chunker options and the text. */
  readonly contentHash: string;
  readonly textLength: number;
  readonly chunkCount: number;
  /** ISO 8601 time of the last write that changed the chunks. */
  readonly ingestedAt: string;
}

/** Restricts a search to some documents and/or sources. An empty list matches nothing. */
export interface SearchFilters {
  readonly docIds?: readonly string[];
  readonly sources?: readonly string[];
}

export interface SearchOptions extends SearchFilters {
  /** Number of hits, an integer in 1..10000. */
  readonly k: number;
  /**
   * BM25's method: "topk" (default) ranks exactly as FTS5's bm25() without scoring every match; "exhaustive"
   * has FTS5 score every row holding a query word (the reference the top-k is tested and benchmarked against).
   */
  readonly bm25Method?: "topk" | "exhaustive";
  /**
   * Corpus-wide BM25 statistics to score with instead of the store's own (a shard of a sharded index: the
   * gateway sums every shard's termStats), so scores equal those of one store holding every shard's rows.
   */
  readonly corpus?: Bm25Corpus;
}

/**
 * Which fusion a hybrid search uses: `fusion` when given; else RRF when `rrfK` or `bm25Weight` is given (the
 * options from before stored fusions: what one leaves out comes from the store's fusion if that is RRF, else
 * k 60 and DEFAULT_BM25_WEIGHT); else the store's fusion (`store.fusion`: the recorded one, or DEFAULT_FUSION).
 */
export interface HybridSearchOptions extends SearchOptions {
  /** The fusion for this call, overriding the store's. Not together with rrfK/bm25Weight. */
  readonly fusion?: FusionSettings;
  /** Asks for RRF with this constant (≥ 0). */
  readonly rrfK?: number;
  /** Hits taken from each of BM25 and dense before fusion. Default max(k, 50). */
  readonly candidates?: number;
  /** Asks for RRF with this weight of the BM25 ranking (≥ 0; dense has weight 1). */
  readonly bm25Weight?: number;
}

export interface SearchHit {
  readonly chunkId: string;
  readonly docId: string;
  readonly ordinal: number;
  readonly start: number;
  readonly end: number;
  readonly text: string;
  /**
   * Higher is better. BM25: −bm25() (FTS5's bm25 is lower-is-better). Dense: cosine similarity.
   * Hybrid: the fused score (RRF sum, or the convex combination of normalised scores in [0, 1]).
   */
  readonly score: number;
  /** Hybrid only: 1-based rank of the chunk in each fused ranking (absent where it was not retrieved). */
  readonly ranks?: { readonly bm25?: number; readonly dense?: number };
}

export interface StoreStats {
  readonly path: string;
  readonly schemaVersion: number;
  readonly documents: number;
  readonly chunks: number;
  readonly embedder: EmbedderInfo;
  readonly dimensions: number;
  readonly quantization: VectorQuantization;
  readonly chunker: Required<ChunkerOptions>;
  /** Vectors in the in-memory index (equals `chunks` when nothing is missing). */
  readonly vectors: number;
  /** Chunks without a vector (after a crash, until rebuilt). */
  readonly missingVectors: number;
  /** Vectors added or removed since the vector file was last saved. */
  readonly unsavedVectorChanges: boolean;
  /** Bytes on disk. */
  readonly files: { readonly sqlite: number; readonly wal: number; readonly vectors: number };
  /** The last automatic vector save failure, if any (explicit flush() throws instead). */
  readonly lastVectorSaveError?: string;
}

/** What the open-time (or explicit) vector repair did. */
export interface VectorRepairReport {
  /** Vectors of deleted chunks removed from the loaded vector file. */
  readonly removedStale: number;
  /** Chunks whose vector was missing and was rebuilt from the chunk text. */
  readonly rebuilt: number;
  /** Chunks still without a vector (no embed function given). */
  readonly missing: number;
  /** Set when the vector file failed its checksum or could not be read and was moved aside. */
  readonly discardedVectorFile?: string;
}
