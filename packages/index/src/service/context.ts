import type { JobLane } from "@attr-rag/contracts";
import type { ChunkStore } from "../ChunkStore.js";
import type { EmbedderInfo } from "../types.js";
import type { IndexServiceLimits } from "./limits.js";
import type { ServiceLog } from "./toGrpcStatus.js";

/**
 * What the service needs of an embedder: the store's id and dimensions, and cancellable embedding; ingest
 * passes lane "batch" (see Embedder.embed).
 */
export interface QueryEmbedder extends EmbedderInfo {
  embed(texts: readonly string[], signal?: AbortSignal, lane?: JobLane): Promise<Float32Array[]>;
}

/** Shared by the per-RPC handlers. */
export interface ServiceContext {
  readonly store: ChunkStore;
  readonly embedder: QueryEmbedder;
  readonly limits: IndexServiceLimits;
  readonly log: ServiceLog;
}
