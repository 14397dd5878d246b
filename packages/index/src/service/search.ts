import type { ChunkStore } from "../ChunkStore.js";
import { RetrievalMode, type ScoredChunk, type SearchRequest, type SearchResponse } from "@attr-rag/contracts";
import type { SearchFilters, SearchHit } from "../types.js";
import type { ServiceContext } from "./context.js";
import { invalidArgument } from "./ServiceError.js";
import { chunkConverter } from "./toProtoChunk.js";
import { unaryHandler } from "./unaryHandler.js";
import { observeSearch } from "../indexMetrics.js";

export const MODE_LABELS = {
  [RetrievalMode.RETRIEVAL_MODE_DENSE]: "dense",
  [RetrievalMode.RETRIEVAL_MODE_BM25]: "bm25",
  [RetrievalMode.RETRIEVAL_MODE_HYBRID]: "hybrid",
} as const;

/** RETRIEVAL_MODE_UNSPECIFIED means DENSE (retrieval.proto), as in the paper. */
function resolveMode(mode: RetrievalMode): RetrievalMode.RETRIEVAL_MODE_DENSE | RetrievalMode.RETRIEVAL_MODE_BM25 | RetrievalMode.RETRIEVAL_MODE_HYBRID {
  switch (mode) {
    case RetrievalMode.RETRIEVAL_MODE_UNSPECIFIED:
    case RetrievalMode.RETRIEVAL_MODE_DENSE:
      return RetrievalMode.RETRIEVAL_MODE_DENSE;
    case RetrievalMode.RETRIEVAL_MODE_BM25:
    case RetrievalMode.RETRIEVAL_MODE_HYBRID:
      return mode;
    default:
      throw invalidArgument(`options.mode ${String(mode)} is not a RetrievalMode; use DENSE (1), BM25 (2) or HYBRID (3)`);
  }
}

export function validateSearchRequest(ctx: ServiceContext, request: SearchRequest) {
  const { limits } = ctx;
  const query = request.query;
  if (query.trim().length === 0) throw invalidArgument("query is empty; pass the question text");
  if (query.length > limits.maxQueryChars) {
    throw invalidArgument(`query has ${query.length} characters, more than the limit of ${limits.maxQueryChars}; shorten it`);
  }
  const options = request.options;
  const k = options?.k ?? limits.defaultK;
  if (k < 1 || k > limits.maxK) throw invalidArgument(`options.k must be from 1 to ${limits.maxK}, got ${k}`);
  const mode = resolveMode(options?.mode ?? RetrievalMode.RETRIEVAL_MODE_UNSPECIFIED);
  // In the proto an empty list does not restrict; in the store an empty list matches nothing.
  const filters: SearchFilters = {
    ...(options?.filter?.docIds.length ? { docIds: options.filter.docIds } : {}),
    ...(options?.filter?.sources.length ? { sources: options.filter.sources } : {}),
  };
  return { query, k, mode, filters, rrfK: options?.rrfK };
}

/** Search hits as proto ScoredChunks: ranks and scores filled in per mode as the proto documents them. */
export function toScoredChunks(store: ChunkStore, hits: readonly SearchHit[], mode: RetrievalMode): ScoredChunk[] {
  const toChunk = chunkConverter(store);
  return hits.map((hit, i) => {
    const rank = i + 1;
    const scored: ScoredChunk = { chunk: toChunk(hit), score: hit.score, rank };
    if (mode === RetrievalMode.RETRIEVAL_MODE_DENSE) Object.assign(scored, { denseRank: rank, denseScore: hit.score });
    else if (mode === RetrievalMode.RETRIEVAL_MODE_BM25) Object.assign(scored, { bm25Rank: rank, bm25Score: hit.score });
    else {
      if (hit.ranks?.dense !== undefined) scored.denseRank = hit.ranks.dense;
      if (hit.ranks?.bm25 !== undefined) scored.bm25Rank = hit.ranks.bm25;
    }
    return scored;
  });
}

/**
 * Search: validates, embeds the query off the event loop (dense, hybrid, or when its embedding is asked
 * for), ranks in the store. The same operation behind gRPC, NATS and the in-process pipeline.
 */
export async function search(ctx: ServiceContext, request: SearchRequest, signal: AbortSignal): Promise<SearchResponse> {
  const { query, k, mode, filters, rrfK } = validateSearchRequest(ctx, request);
  const { store, embedder } = ctx;
  const started = performance.now();
  const needsVector = mode !== RetrievalMode.RETRIEVAL_MODE_BM25 || request.includeQueryEmbedding;
  const vector = needsVector ? (await embedder.embed([query], signal))[0]! : undefined;
  signal.throwIfAborted();
  const hits =
    mode === RetrievalMode.RETRIEVAL_MODE_BM25
      ? await store.searchBm25Async(query, { k, ...filters })
      : mode === RetrievalMode.RETRIEVAL_MODE_DENSE
        ? store.searchDense(vector!, { k, ...filters })
        : await store.searchHybridAsync(query, vector!, { k, ...filters, ...(rrfK !== undefined ? { rrfK } : {}) });
  observeSearch(MODE_LABELS[mode], "store", (performance.now() - started) / 1000);
  return {
    chunks: toScoredChunks(store, hits, mode),
    mode,
    embedder: mode === RetrievalMode.RETRIEVAL_MODE_BM25 ? "" : embedder.id,
    ...(request.includeQueryEmbedding ? { queryEmbedding: { values: Array.from(vector!) } } : {}),
  };
}

export function searchHandler(ctx: ServiceContext) {
  return unaryHandler<SearchRequest, SearchResponse>(ctx, "Search", (request, signal) => search(ctx, request, signal));
}
