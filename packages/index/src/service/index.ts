// The gRPC IndexService (attr_rag.v1) over a ChunkStore: one handler file per RPC, one error mapping.
export { createIndexServiceImplementation } from "./createIndexServiceImplementation.js";
export { startIndexServer, type IndexServerHandle, type StartIndexServerOptions } from "./startIndexServer.js";
export { DEFAULT_INDEX_SERVICE_LIMITS, resolveLimits, type IndexServiceLimits } from "./limits.js";
export { toGrpcStatus, type GrpcStatus, type ServiceLog } from "./toGrpcStatus.js";
export { ServiceError } from "./ServiceError.js";
export type { QueryEmbedder } from "./context.js";
export { chunkConverter } from "./toProtoChunk.js";
export { callSignal } from "./callSignal.js";
export { listen, shutdown } from "./serverLifecycle.js";
export { toScoredChunks } from "./search.js";
export { LocalIndex, asServiceError, type IndexBackend } from "./indexBackend.js";
export { ingestOne, ingestResponse, type Outcome as IngestOutcome } from "./ingestDocuments.js";
export { search } from "./search.js";
export { getChunks } from "./getChunks.js";
export { getStats } from "./getStats.js";
export { deleteDocument } from "./deleteDocument.js";
export { embedTexts } from "./embedTexts.js";
export type { ServiceContext } from "./context.js";
