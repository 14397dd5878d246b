import { RetrievalMode, type FusionSettings as ProtoFusion, type PrepareChunksRequest, type PreparedChunks, type ShardSearchRequest, type ShardSearchResponse, type TermStats, type TermStatsRequest } from "@attr-rag/contracts";
import type { Bm25Corpus } from "../search/bm25Corpus.js";
import type { FusionSettings } from "../search/fusionSettings.js";
import type { ServiceContext } from "./context.js";
import { MODE_LABELS, toScoredChunks, validateSearchRequest } from "./search.js";
import { observeSearch } from "../indexMetrics.js";
import { invalidArgument } from "./ServiceError.js";
import { embedTexts as embedChunkTexts } from "../ingest/embedTexts.js";
import { DEFAULT_EMBED_BATCH_SIZE } from "../store/validateOpenOptions.js";

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
  // Nothing is embedded or searched for an answer that would be thrown away.
  const early = staleness(request, store.replica.applied);
  if (early !== undefined) return early;
  const wantsBm25 = mode !== RetrievalMode.RETRIEVAL_MODE_DENSE;
  const wantsDense = mode !== RetrievalMode.RETRIEVAL_MODE_BM25;
  if (wantsBm25 && request.corpus === undefined) throw invalidArgument("corpus is missing: a shard scores BM25 with the whole index's statistics (the sum of every shard's TermStats)");
  const corpus: Bm25Corpus | undefined = request.corpus && { rows: request.corpus.rows, tokens: request.corpus.tokens, df: request.corpus.documentFrequency };
  const started = performance.now();
  const vector = wantsDense || request.search.includeQueryEmbedding ? (await embedder.embed([query], signal))[0]! : undefined;
  signal.throwIfAborted();
  // The version the searches see: read again now (an entry may have been applied while the query was embedded),
  // and compared after them, since a search thread reads its own snapshot and the log goes on meanwhile.
  const version = store.replica.applied;
  const late = staleness(request, version);
  if (late !== undefined) return late;
  const dense = wantsDense ? toScoredChunks(store, store.searchDense(vector!, { k: candidates, ...filters }), RetrievalMode.RETRIEVAL_MODE_DENSE) : [];
  const found = wantsBm25 ? await store.searchBm25AtVersion(query, { k: candidates, ...filters, corpus }) : undefined;
  const bm25 = found === undefined ? [] : toScoredChunks(store, found.hits, RetrievalMode.RETRIEVAL_MODE_BM25);
  // BM25 scored against figures counted at `expectedVersion` by data of another version: stale, not wrong-but-fresh.
  if (request.checkVersion && found !== undefined && found.version !== version) return { bm25: [], dense: [], embedder: "", stale: true, version: found.version };
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

/**
 * A stale answer instead of a search: the replica has not applied what the caller saw applied (min_applied), or,
 * with check_version, is at another version than the BM25 figures were counted at.
 */
function staleness(request: ShardSearchRequest, version: number): ShardSearchResponse | undefined {
  const behind = (request.minApplied ?? 0) > version;
  const moved = request.checkVersion && request.expectedVersion !== version;
  return behind || moved ? { bm25: [], dense: [], embedder: "", stale: true, version } : undefined;
}

/** PrepareChunks: a document chunked by this store's chunker and embedded (batch lane) for the ingest log. */
export async function prepareChunks(ctx: ServiceContext, request: PrepareChunksRequest, signal: AbortSignal): Promise<PreparedChunks> {
  const doc = request.document;
  if (doc === undefined || doc.id.length === 0 || doc.text.trim().length === 0) throw invalidArgument("document is missing, or has no id or no text");
  const bytes = Buffer.byteLength(doc.text, "utf8");
  if (bytes > ctx.limits.maxDocumentBytes) throw invalidArgument(`text is ${bytes} bytes, more than the limit of ${ctx.limits.maxDocumentBytes} bytes per document; split the document`);
  const texts = ctx.store.chunkTexts(doc.id, doc.text);
  // Checked and batched as the store's own ingest embeds, on the batch lane (a write, not a query).
  const vectors = await embedChunkTexts((t) => ctx.embedder.embed(t, signal, "batch"), texts, ctx.store.embedder, DEFAULT_EMBED_BATCH_SIZE);
  return { embedder: ctx.store.embedder.id, splitter: ctx.store.splitter, vectors: vectors.map((v) => ({ values: Array.from(v) })) };
}
