// Public API of @attr-rag/index: the durable chunk store (SQLite + FTS5 BM25 + usearch vectors).
// Siblings import only from here.
export { ChunkStore } from "./ChunkStore.js";
export {
  DocumentNotFoundError,
  EmbedderMismatchError,
  EmbeddingError,
  InvalidDocumentError,
  InvalidQueryError,
  StoreClosedError,
  StoreError,
  StoreLockedError,
  StoreNotFoundError,
  VectorsIncompleteError,
} from "./errors.js";
export { MAX_K, MAX_QUERY_CHARS } from "./search/searchOptions.js";
export { toFtsMatch } from "./search/ftsQuery.js";
export { SCHEMA_VERSION } from "./sqlite/migrations.js";
export { DEFAULT_EMBED_BATCH_SIZE, DEFAULT_SAVE_EVERY } from "./store/validateOpenOptions.js";
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
