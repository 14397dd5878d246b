import { RetrievalMode, type FusionSettings as ProtoFusion, type ShardSearchRequest, type ShardSearchResponse, type TermStats, type TermStatsRequest } from "@attr-rag/contracts";
import type { Bm25Corpus } from "../search/bm25Corpus.js";
import type { FusionSettings } from "../search/fusionSettings.js";
import type { ServiceContext } from "./context.js";
import { MODE_LABELS, toScoredChunks, validateSearchRequest } from "./search.js";
import { observeSearch } from "../indexMetrics.js";
import { invalidArgument } from "./ServiceError.js";

/** TermStats: this shard's BM25 figures for the query's tokens (the gateway sums every shard's). */
export function termStats(ctx: ServiceContext, request: TermStatsRequest): TermStats {
  if (request.query.trim().length === 0) throw invalidArgument("query is empty; pass the question text");
  if (request.query.length > ctx.limits.maxQueryChars) throw invalidArgument(`query has ${request.query.length} characters, more than the limit of ${ctx.limits.maxQueryChars}; shorten it`);
  const s = ctx.store.termStats(request.query);
  return { rows: s.rows, tokens: s.tokens, documentFrequency: { ...s.df }, multiTokenPhrases: [...s.multiTokenPhrases], version: s.version };
}

export function toProtoFusion(f: FusionSettings): ProtoFusion {
  return { method: f.method, rrfK: f.method === "rrf" ? f.rrfK : 0, bm25Weight: f.bm25Weight };
}

/**
 * ShardSearch: this shard's best chunks for each list the mode needs (BM25 scored with the corpus-wide
 * statistics the gateway sends, dense by cosine), `candidates` long; the gateway merges every shard's lists
 * and fuses them itself, so the fusion is over the whole index's lists, as one store's would be.
 */
export async function shardSearch(ctx: ServiceContext, request: ShardSearchRequest, signal: AbortSignal): Promise<ShardSearchResponse> {
  if (request.search === undefined) throw invalidArgument("search is missing; pass the client's SearchRequest");
  const { query, k, mode, filters, rrfK } = validateSearchRequest(ctx, request.search);
  const candidates = request.candidates === 0 ? k : request.candidates;
  if (candidates > ctx.limits.maxK) throw invalidArgument(`candidates must be from 1 to ${ctx.limits.maxK}, got ${candidates}`);
  const { store, embedder } = ctx;
  const version = store.replica.applied;
  if (request.checkVersion && request.expectedVersion !== version) return { bm25: [], dense: [], embedder: "", stale: true, version };
  const wantsBm25 = mode !== RetrievalMode.RETRIEVAL_MODE_DENSE;
  const wantsDense = mode !== RetrievalMode.RETRIEVAL_MODE_BM25;
  if (wantsBm25 && request.corpus === undefined) throw invalidArgument("corpus is missing: a shard scores BM25 with the whole index's statistics (the sum of every shard's TermStats)");
  const corpus: Bm25Corpus | undefined = request.corpus && { rows: request.corpus.rows, tokens: request.corpus.tokens, df: request.corpus.documentFrequency };
  const started = performance.now();
  const vector = wantsDense || request.search.includeQueryEmbedding ? (await embedder.embed([query], signal))[0]! : undefined;
  signal.throwIfAborted();
  const bm25 = wantsBm25 ? toScoredChunks(store, await store.searchBm25Async(query, { k: candidates, ...filters, corpus }), RetrievalMode.RETRIEVAL_MODE_BM25) : [];
  const dense = wantsDense ? toScoredChunks(store, store.searchDense(vector!, { k: candidates, ...filters }), RetrievalMode.RETRIEVAL_MODE_DENSE) : [];
  observeSearch(MODE_LABELS[mode], "shard", (performance.now() - started) / 1000);
  return {
    bm25,
    dense,
    embedder: wantsDense ? embedder.id : "",
    ...(request.search.includeQueryEmbedding ? { queryEmbedding: { values: Array.from(vector!) } } : {}),
    ...(mode === RetrievalMode.RETRIEVAL_MODE_HYBRID ? { fusion: toProtoFusion(store.fusionFor(rrfK === undefined ? {} : { rrfK })) } : {}),
    stale: false,
    version,
  };
}
