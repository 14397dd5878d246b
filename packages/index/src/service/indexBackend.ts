import type {
  EmbedTextsRequest,
  EmbedTextsResponse,
  GetChunksRequest,
  GetChunksResponse,
  GetStatsResponse,
  SearchRequest,
  SearchResponse,
} from "@attr-rag/contracts";
import type { ChunkStore } from "../ChunkStore.js";
import type { QueryEmbedder, ServiceContext } from "./context.js";
import { embedTexts } from "./embedTexts.js";
import { getChunks } from "./getChunks.js";
import { getStats } from "./getStats.js";
import { resolveLimits, type IndexServiceLimits } from "./limits.js";
import { search } from "./search.js";
import { ServiceError } from "./ServiceError.js";
import { stderrLog, toGrpcStatus, type ServiceLog } from "./toGrpcStatus.js";

/**
 * The index as the pipeline sees it: IndexService's messages in and out. LocalIndex runs the service's own
 * operations on an open store; over NATS a client sends the same messages to `attr-rag index serve --nats`,
 * which runs the same operations. Failures reject with a ServiceError carrying the gRPC status either way.
 */
export interface IndexBackend {
  search(request: SearchRequest, signal: AbortSignal): Promise<SearchResponse>;
  getChunks(request: GetChunksRequest, signal: AbortSignal): Promise<GetChunksResponse>;
  getStats(signal: AbortSignal): Promise<GetStatsResponse>;
  embedTexts(request: EmbedTextsRequest, signal: AbortSignal): Promise<EmbedTextsResponse>;
}

export class LocalIndex implements IndexBackend {
  readonly #ctx: ServiceContext;

  constructor(store: ChunkStore, embedder: QueryEmbedder, limits: Partial<IndexServiceLimits> = {}, log: ServiceLog = stderrLog) {
    this.#ctx = { store, embedder, limits: resolveLimits(limits), log };
  }

  get context(): ServiceContext {
    return this.#ctx;
  }

  search(request: SearchRequest, signal: AbortSignal): Promise<SearchResponse> {
    return this.#run("Search", () => search(this.#ctx, request, signal));
  }

  getChunks(request: GetChunksRequest): Promise<GetChunksResponse> {
    return this.#run("GetChunks", () => getChunks(this.#ctx, request));
  }

  getStats(): Promise<GetStatsResponse> {
    return this.#run("GetStats", () => getStats(this.#ctx));
  }

  embedTexts(request: EmbedTextsRequest, signal: AbortSignal): Promise<EmbedTextsResponse> {
    return this.#run("EmbedTexts", () => embedTexts(this.#ctx, request, signal));
  }

  async #run<T>(rpc: string, operation: () => Promise<T> | T): Promise<T> {
    try {
      return await operation();
    } catch (err) {
      throw asServiceError(err, rpc, this.#ctx.log);
    }
  }
}

/** Any failure as the ServiceError the gRPC service would answer; an abort stays an abort. */
export function asServiceError(err: unknown, rpc: string, log: ServiceLog): unknown {
  if (err instanceof ServiceError || (err instanceof Error && err.name === "AbortError")) return err;
  const { code, details } = toGrpcStatus(err, rpc, log);
  return new ServiceError(code, details, { cause: err });
}
