// Public API of @attr-rag/index: the durable chunk store (SQLite + FTS5 BM25 + usearch vectors).
// Siblings import only from here.
export { ChunkStore, type WriteOptions } from "./ChunkStore.js";
export { fuseHits, hybridCandidates } from "./search/fuseHits.js";
export {
  DEFAULT_BM25_WEIGHT,
  DEFAULT_FUSION,
  describeFusion,
  LEGACY_RRF_FUSION,
  validateFusion,
  type FusionSettings,
  type RrfFusion,
} from "./search/fusionSettings.js";
export {
  DocumentNotFoundError,
  DocumentReadError,
  EmbedderMismatchError,
  StoreConfigMismatchError,
  EmbeddingError,
  InvalidDocumentError,
  InvalidQueryError,
  StoreClosedError,
  StoreError,
  StoreLockedError,
  StoreNotFoundError,
  VectorsIncompleteError,
} from "./errors.js";
export type { Embedder } from "./embedders/Embedder.js";
export { UseLiteEmbedder, USE_LITE_ID, USE_LITE_DIMENSIONS, USE_LITE_BATCH_SIZE } from "./embedders/UseLiteEmbedder.js";
export { GgufEmbedder, type GgufEmbedderOptions } from "./embedders/GgufEmbedder.js";
export { createEmbedder, type EmbedderSpec } from "./embedders/createEmbedder.js";
export { readDocuments } from "./ingest/readers/readDocuments.js";
export { DEFAULT_MAX_FILE_BYTES, measureSources, SUPPORTED_EXTENSIONS } from "./ingest/readers/listSources.js";
export type { ReadDocument, ReadOptions, SkippedInput } from "./ingest/readers/types.js";
export { MAX_K, MAX_QUERY_CHARS } from "./search/searchOptions.js";
export { toFtsMatch } from "./search/ftsQuery.js";
export type { Bm25TopKTrace } from "./search/bm25TopK.js";
export {
  callSignal,
  LocalIndex,
  type IndexBackend,
  createIndexServiceImplementation,
  DEFAULT_INDEX_SERVICE_LIMITS,
  listen,
  ServiceError,
  shutdown,
  startIndexServer,
  toGrpcStatus,
  type GrpcStatus,
  type IndexServerHandle,
  type IndexServiceLimits,
  type QueryEmbedder,
  type ServiceLog,
  type StartIndexServerOptions,
} from "./service/index.js";
export { SCHEMA_VERSION } from "./sqlite/migrations.js";
export { serveIndexOverNats, serveIndexShardOverNats } from "./nats/indexOverNats.js";
export { NatsIndex } from "./nats/natsIndex.js";
export { ShardedNatsIndex, type ShardedNatsIndexOptions } from "./nats/shardedNatsIndex.js";
export { startIndexReplica, type IndexReplica, type IndexReplicaOptions } from "./nats/indexReplica.js";
export { IndexLogFollower } from "./nats/indexLogFollower.js";
export { LogTrimmedError, UnknownLogEntryError } from "./nats/logReach.js";
export { IndexLogWriter, type IndexLogWriterOptions, type PrepareChunks } from "./nats/indexLogWriter.js";
export { listIndexReplicas } from "./nats/listIndexReplicas.js";
export { DEFAULT_LAG_LIMITS, type ReplicaLag, type ReplicaLagLimits } from "./nats/replicaLag.js";
export type { RemoteIndex } from "./nats/remoteIndex.js";
export { sumTermStats, type Bm25Corpus, type Bm25TermStats } from "./search/bm25Corpus.js";
export { createIndexServiceOverNats } from "./nats/indexServiceOverNats.js";
export { DEFAULT_EMBED_BATCH_SIZE, DEFAULT_SAVE_EVERY } from "./store/validateOpenOptions.js";
export { StoreLock } from "./store/storeLock.js";
export { openDurableDatabase } from "./sqlite/openDatabase.js";
export { snapshotStore, type StoreSnapshot } from "./store/snapshotStore.js";
export type {
  DocumentInput,
  EmbedderInfo,
  EmbedFunction,
  HybridSearchOptions,
  OpenStoreOptions,
  SearchFilters,
  SearchHit,
  SearchOptions,
  StoredDocument,
  StoreStats,
  UpsertResult,
  UpsertStatus,
  VectorQuantization,
  VectorRepairReport,
} from "./types.js";
export { storeSources } from "./indexMetrics.js";
export { startEmbedder, storeErrorAsInput } from "./storeInput.js";
