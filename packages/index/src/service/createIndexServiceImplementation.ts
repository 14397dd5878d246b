import type { UntypedServiceImplementation } from "@grpc/grpc-js";
import type { IndexServiceServer } from "@attr-rag/contracts";
import type { ChunkStore } from "../ChunkStore.js";
import { EmbedderMismatchError } from "../errors.js";
import type { QueryEmbedder, ServiceContext } from "./context.js";
import { deleteDocumentHandler } from "./deleteDocument.js";
import { embedTextsHandler } from "./embedTexts.js";
import { getChunksHandler } from "./getChunks.js";
import { getStatsHandler } from "./getStats.js";
import { ingestDocumentsHandler } from "./ingestDocuments.js";
import { resolveLimits, type IndexServiceLimits } from "./limits.js";
import { searchHandler } from "./search.js";
import { stderrLog, type ServiceLog } from "./toGrpcStatus.js";

/**
 * The grpc-js handlers of attr_rag.v1.IndexService over an open store, for `server.addService(IndexServiceService, ...)`.
 * The embedder must be the store's (EmbedderMismatchError otherwise): it embeds ingested chunks and queries.
 */
export function createIndexServiceImplementation(
  store: ChunkStore,
  embedder: QueryEmbedder,
  limits: Partial<IndexServiceLimits> = {},
  log: ServiceLog = stderrLog,
): IndexServiceServer & UntypedServiceImplementation {
  if (embedder.id !== store.embedder.id || embedder.dimensions !== store.embedder.dimensions) {
    throw new EmbedderMismatchError(store.embedder, { id: embedder.id, dimensions: embedder.dimensions }, store.path);
  }
  const ctx: ServiceContext = { store, embedder, limits: resolveLimits(limits), log };
  return {
    ingestDocuments: ingestDocumentsHandler(ctx),
    search: searchHandler(ctx),
    getChunks: getChunksHandler(ctx),
    deleteDocument: deleteDocumentHandler(ctx),
    getStats: getStatsHandler(ctx),
    embedTexts: embedTextsHandler(ctx),
  };
}
