import { setTimeout as sleep } from "node:timers/promises";
import { status } from "@grpc/grpc-js";
import {
  RetrievalMode,
  type Chunk,
  type DeleteDocumentRequest,
  type DeleteDocumentResponse,
  type EmbedTextsRequest,
  type EmbedTextsResponse,
  type GetChunksRequest,
  type GetChunksResponse,
  type GetStatsResponse,
  type IngestDocumentsRequest,
  type IngestDocumentsResponse,
  type SearchRequest,
  type SearchResponse,
  type Document,
  type ShardSearchRequest,
  type ShardSearchResponse,
  type TermStats,
} from "@attr-rag/contracts";
import { shardOf } from "@attr-rag/core";
import type { ConnectionWatch, NatsConnection } from "@attr-rag/nats";
import { multiTokenPhraseError } from "../search/bm25TopK.js";
import { sumTermStats } from "../search/bm25Corpus.js";
import { hybridCandidates } from "../search/fuseHits.js";
import { MAX_K } from "../search/searchOptions.js";
import { validateFusion, type FusionSettings } from "../search/fusionSettings.js";
import { resolveLimits } from "../service/limits.js";
import { ServiceError } from "../service/ServiceError.js";
import { fuseMerged, mergeShardLists, rerankMerged } from "./mergeShards.js";
import { CorpusStatsCache } from "./corpusStatsCache.js";
import { IndexLogWriter } from "./indexLogWriter.js";
import { NatsIndex } from "./natsIndex.js";
import type { RemoteIndex } from "./remoteIndex.js";

/**
 * A sharded index reached over NATS: S shards (`attr-rag index serve --nats --shard i/S`), each holding the
 * documents shardOf sends it. A search goes to every shard and is merged here: BM25 in two rounds (every
 * shard's figures for the query's tokens, summed, then each shard's top list scored with those sums, so the
 * scores are one store's), dense by cosine, hybrid fused after the merge. Reads of a document (GetChunks) go
 * to its shard; writes go into the ingest log, which every replica of the shard applies. A shard nobody
 * serves fails the call UNAVAILABLE, naming the shard: never a partial answer.
 */
export class ShardedNatsIndex implements RemoteIndex {
  readonly #shards: NatsIndex[];
  readonly #nc: NatsConnection;
  readonly #timeoutMs: number;
  readonly #cache: CorpusStatsCache;
  readonly #vectorsAtWriter: boolean;
  #writer: Promise<IndexLogWriter> | undefined;
  /** The writer once open: searches ask each shard for at least what it saw applied (read-your-writes). */
  #opened: IndexLogWriter | undefined;
  #nextEmbed = 0;

  constructor(nc: NatsConnection, shards: number, watch?: ConnectionWatch, timeoutMs = 60_000, options: ShardedNatsIndexOptions = {}) {
    this.#nc = nc;
    this.#timeoutMs = timeoutMs;
    this.#vectorsAtWriter = options.vectorsAtWriter ?? true;
    this.#cache = new CorpusStatsCache(shards);
    this.#shards = Array.from({ length: shards }, (_, shard) => NatsIndex.shard(nc, { shard, shards }, watch, timeoutMs));
  }

  get shards(): number {
    return this.#shards.length;
  }

  async search(request: SearchRequest, signal: AbortSignal): Promise<SearchResponse> {
    const options = request.options;
    const k = options?.k ?? DEFAULT_SEARCH_LIMITS.defaultK;
    const mode = options?.mode === RetrievalMode.RETRIEVAL_MODE_BM25 || options?.mode === RetrievalMode.RETRIEVAL_MODE_HYBRID ? options.mode : RetrievalMode.RETRIEVAL_MODE_DENSE;
    const hybrid = mode === RetrievalMode.RETRIEVAL_MODE_HYBRID;
    // k beyond MAX_K is refused by every shard with its own message; the candidates stay within it.
    const candidates = hybrid ? Math.min(MAX_K, hybridCandidates(k)) : 0;
    let parts: ShardSearchResponse[];
    if (mode === RetrievalMode.RETRIEVAL_MODE_DENSE) parts = await this.#all(signal, (s, sig, shard) => this.#searchShard(s, shard, { search: request, candidates, expectedVersion: 0, checkVersion: false }, sig));
    else {
      // BM25 scores need the corpus's figures at the versions the shards are at: counted (or remembered), then
      // searched; a shard that moved on in between answers stale, and the figures are counted again. After a few
      // tries (replicas of a shard at different versions while one catches up) the search goes ahead unchecked.
      for (let attempt = 0; ; attempt++) {
        const { corpus, versions } = await this.#corpus(request.query, signal, attempt > 0);
        const check = attempt < STALE_RETRIES;
        parts = await this.#all(signal, (s, sig, shard) => this.#searchShard(s, shard, { search: request, corpus, candidates, expectedVersion: versions[shard]!, checkVersion: check }, sig));
        if (!parts.some((p) => p.stale)) break;
        this.#cache.clear();
      }
    }
    const embedder = agreed(parts.map((p) => p.embedder), "embedder");
    const cut = hybrid ? candidates : k;
    const bm25 = rerankMerged(mergeShardLists(parts.map((p) => p.bm25), cut), "bm25");
    const dense = rerankMerged(mergeShardLists(parts.map((p) => p.dense), cut), "dense");
    const chunks = hybrid ? fuseMerged(bm25, dense, k, this.#fusion(parts)) : mode === RetrievalMode.RETRIEVAL_MODE_BM25 ? bm25 : dense;
    const queryEmbedding = parts[0]!.queryEmbedding;
    return { chunks, mode, embedder, ...(request.includeQueryEmbedding && queryEmbedding !== undefined ? { queryEmbedding } : {}) };
  }

  /** The whole index's BM25 figures for the query (every shard's, summed) and each shard's version. */
  async #corpus(query: string, signal: AbortSignal, recount: boolean): Promise<{ corpus: TermStats; versions: number[] }> {
    const { tokens, multiTokenPhrases } = this.#cache.tokenize(query);
    if (multiTokenPhrases.length > 0) throw new ServiceError(status.INVALID_ARGUMENT, multiTokenPhraseError(multiTokenPhrases).message);
    const known = recount ? undefined : this.#cache.lookup(tokens);
    if (known !== undefined) return known;
    const parts = await this.#all(signal, (s, sig, shard) => this.#fresh(shard, sig, () => s.termStats({ query }, sig)));
    const phrases = [...new Set(parts.flatMap((p) => p.multiTokenPhrases))];
    if (phrases.length > 0) throw new ServiceError(status.INVALID_ARGUMENT, multiTokenPhraseError(phrases).message);
    this.#cache.remember(parts);
    const sum = sumTermStats(parts.map((p) => ({ rows: p.rows, tokens: p.tokens, df: p.documentFrequency })));
    return { corpus: { rows: sum.rows, tokens: sum.tokens, documentFrequency: { ...sum.df }, multiTokenPhrases: [], version: 0 }, versions: parts.map((p) => p.version) };
  }

  /** One shard's part of a search, from a replica that has applied every write this index saw applied there. */
  #searchShard(s: NatsIndex, shard: number, request: Omit<ShardSearchRequest, "minApplied">, signal: AbortSignal): Promise<ShardSearchResponse> {
    return this.#fresh(shard, signal, (minApplied) => s.shardSearch({ ...request, minApplied }, signal));
  }

  /**
   * Read-your-writes: asks again (the queue group picks a replica each time) while the answer comes from a
   * replica that has not applied the last entry of the shard this index saw applied. A replica that stays
   * behind leaves the queue group (IndexReplica), so the asking ends; the call's timeout bounds it.
   */
  async #fresh<T extends { version: number }>(shard: number, signal: AbortSignal, call: (minApplied: number) => Promise<T>): Promise<T> {
    const minApplied = this.#opened?.minApplied(shard) ?? 0;
    const deadline = performance.now() + this.#timeoutMs;
    for (let attempt = 0; ; attempt++) {
      const answer = await call(minApplied);
      if (answer.version >= minApplied) return answer;
      if (performance.now() > deadline) {
        throw new ServiceError(
          status.UNAVAILABLE,
          `no replica of index shard ${shard} of ${this.shards} has applied ingest log entry ${minApplied} (a write this gateway saw applied) within ${this.#timeoutMs / 1000} s; the last answer was at ${answer.version}. See which replicas are behind with GetCluster`,
        );
      }
      await sleep(Math.min(100, 2 ** attempt), undefined, { signal });
    }
  }

  #fusion(parts: readonly ShardSearchResponse[]): FusionSettings {
    const settings = parts.map((p, shard) => {
      if (p.fusion === undefined) throw new ServiceError(status.INTERNAL, `index shard ${shard} of ${this.shards} answered a hybrid search without its fusion settings`);
      const f = p.fusion;
      return validateFusion(f.method === "rrf" ? { method: "rrf", rrfK: f.rrfK, bm25Weight: f.bm25Weight } : { method: f.method, bm25Weight: f.bm25Weight }, `index shard ${shard}`);
    });
    agreed(settings.map((f) => JSON.stringify(f)), "hybrid fusion (record the same with `attr-rag eval tune --apply` on every shard's store)");
    return settings[0]!;
  }

  async getChunks(request: GetChunksRequest, signal: AbortSignal): Promise<GetChunksResponse> {
    const byShard = new Map<number, number[]>();
    request.ranges.forEach((r, i) => {
      const shard = shardOf(r.docId, this.shards);
      byShard.set(shard, [...(byShard.get(shard) ?? []), i]);
    });
    const answered = await Promise.all(
      [...byShard].map(async ([shard, at]) => ({ at, chunks: (await this.#shards[shard]!.getChunks({ ranges: at.map((i) => request.ranges[i]!) }, signal)).chunks })),
    );
    // Each shard answers its ranges in order, a range's chunks in ordinal order: split back per range.
    const perRange: Chunk[][] = request.ranges.map(() => []);
    for (const { at, chunks } of answered) {
      let next = 0;
      for (const i of at) {
        const r = request.ranges[i]!;
        let last = -1;
        while (next < chunks.length) {
          const c = chunks[next]!;
          if (c.docId !== r.docId || c.ordinal < r.firstOrdinal || c.ordinal > r.lastOrdinal || c.ordinal <= last) break;
          perRange[i]!.push(c);
          last = c.ordinal;
          next++;
        }
      }
    }
    return { chunks: perRange.flat() };
  }

  async getStats(signal: AbortSignal): Promise<GetStatsResponse> {
    const parts = await this.#all(signal, (s, sig) => s.getStats(sig));
    const sum = (f: (p: GetStatsResponse) => number) => parts.reduce((n, p) => n + f(p), 0);
    return {
      documents: sum((p) => p.documents),
      chunks: sum((p) => p.chunks),
      embedder: agreed(parts.map((p) => p.embedder), "embedder"),
      dimension: parts[0]!.dimension,
      storePath: parts.map((p, shard) => `shard ${shard}: ${p.storePath}`).join("; "),
      databaseBytes: sum((p) => p.databaseBytes),
      vectorIndexBytes: sum((p) => p.vectorIndexBytes),
      vectors: sum((p) => p.vectors),
      splitter: agreed(parts.map((p) => p.splitter), "splitter"),
    };
  }

  /** Any shard embeds as well as another (they share the embedder): taken in turn. */
  embedTexts(request: EmbedTextsRequest, signal: AbortSignal): Promise<EmbedTextsResponse> {
    const shard = this.#nextEmbed++ % this.shards;
    return this.#shards[shard]!.embedTexts(request, signal);
  }

  /** Into the ingest log (see IndexLogWriter): every replica of the document's shard applies it. */
  async deleteDocument(request: DeleteDocumentRequest, signal: AbortSignal): Promise<DeleteDocumentResponse> {
    return (await this.#log()).delete(request, signal);
  }

  /** Into the ingest log (see IndexLogWriter); LOGGED unless the request waits for replicas. */
  async ingest(request: IngestDocumentsRequest, signal: AbortSignal): Promise<IngestDocumentsResponse> {
    return (await this.#log()).upsert(request, signal);
  }

  #log(): Promise<IndexLogWriter> {
    const prepare = this.#vectorsAtWriter ? (shard: number, document: Document, signal: AbortSignal) => this.#shards[shard]!.prepareChunks({ document }, signal) : undefined;
    this.#writer ??= IndexLogWriter.open(this.#nc, this.shards, { timeoutMs: this.#timeoutMs, ...(prepare ? { prepare } : {}) }).then(
      (writer) => (this.#opened = writer),
      (err: unknown) => {
        this.#writer = undefined;
        throw new ServiceError(status.UNAVAILABLE, `cannot open the ingest log on NATS (JetStream): ${(err as Error).message}; is the server started with -js?`, { cause: err });
      },
    );
    return this.#writer;
  }

  /** The call on every shard; the first failure fails it and cancels the calls still running. */
  async #all<T>(signal: AbortSignal, call: (shard: NatsIndex, signal: AbortSignal, index: number) => Promise<T>): Promise<T[]> {
    const failed = new AbortController();
    const both = AbortSignal.any([signal, failed.signal]);
    try {
      return await Promise.all(
        this.#shards.map((s, i) =>
          call(s, both, i).catch((err: unknown) => {
            failed.abort();
            throw err;
          }),
        ),
      );
    } finally {
      failed.abort();
    }
  }
}

export interface ShardedNatsIndexOptions {
  /**
   * Upserts carry their chunks' vectors, made once by a replica of the document's shard (on the workers when
   * they serve its embedder), so replicas store identical vectors and apply fast. Default true; false leaves
   * every replica to embed what it applies (as logs written before vectors were carried).
   */
  readonly vectorsAtWriter?: boolean;
}

/** Searches checked against the shards' versions before one goes ahead unchecked (see search). */
const STALE_RETRIES = 3;

/** The shards' own default k applies when a search names none: the merge cuts at the same. */
const DEFAULT_SEARCH_LIMITS = resolveLimits({});

/** The one value every shard gave, or FAILED_PRECONDITION naming the disagreement. */
function agreed(values: readonly string[], what: string): string {
  const distinct = [...new Set(values)];
  if (distinct.length > 1) {
    const list = values.map((v, shard) => `shard ${shard}: ${JSON.stringify(v)}`).join(", ");
    throw new ServiceError(status.FAILED_PRECONDITION, `the index shards disagree on their ${what} (${list}); every shard must be built the same way`);
  }
  return distinct[0] ?? "";
}
