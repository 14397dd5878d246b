import {
  DeleteDocumentRequest,
  DeleteDocumentResponse,
  EmbedTextsRequest,
  EmbedTextsResponse,
  GetChunksRequest,
  GetChunksResponse,
  GetStatsRequest,
  GetStatsResponse,
  INDEX_NATS_SERVICE,
  PrepareChunksRequest,
  PreparedChunks,
  indexShardNatsService,
  IngestDocumentsRequest,
  IngestDocumentsResponse,
  SearchRequest,
  SearchResponse,
  ShardSearchRequest,
  ShardSearchResponse,
  TermStats,
  TermStatsRequest,
  type NatsEndpoint,
} from "@attr-rag/contracts";
import type { ShardSpec } from "@attr-rag/core";
import { Code, RemoteError, requestProto, type ConnectionWatch, type NatsConnection, type ProtoCodec } from "@attr-rag/nats";
import type { RemoteIndex } from "./remoteIndex.js";
import { ServiceError } from "../service/ServiceError.js";

/** The first attempt of a read on a replicated shard (see #read). */
const FIRST_READ_ATTEMPT_MS = 2_000;

/**
 * The index reached over NATS (`attr-rag index serve --nats`): the IndexBackend the distributed gateway and
 * the selector use. Failures come back as the same ServiceError (gRPC status and message) as in-process.
 */
export class NatsIndex implements RemoteIndex {
  readonly #endpoints: Partial<Record<keyof ReturnType<typeof indexShardNatsService>["endpoints"], NatsEndpoint>>;
  readonly #label: string;
  readonly #startHint: string;
  readonly #replicated: boolean;

  constructor(
    private readonly nc: NatsConnection,
    private readonly watch?: ConnectionWatch,
    private readonly timeoutMs = 60_000,
    shard?: ShardSpec,
  ) {
    this.#endpoints = shard === undefined ? INDEX_NATS_SERVICE.endpoints : indexShardNatsService(shard.shard, shard.shards).endpoints;
    this.#label = shard === undefined ? "the index" : `index shard ${shard.shard} of ${shard.shards}`;
    this.#replicated = shard !== undefined;
    this.#startHint = shard === undefined ? "`attr-rag index serve --store DIR --nats URL`" : `\`attr-rag index serve --store DIR --nats URL --shard ${shard.shard}/${shard.shards}\``;
  }

  /** One shard of a sharded index (`attr-rag index serve --nats --shard i/S`). */
  static shard(nc: NatsConnection, shard: ShardSpec, watch?: ConnectionWatch, timeoutMs = 60_000): NatsIndex {
    return new NatsIndex(nc, watch, timeoutMs, shard);
  }

  /** This shard's BM25 figures for a query's tokens (a shard only). */
  termStats(request: TermStatsRequest, signal: AbortSignal): Promise<TermStats> {
    return this.#read(this.#endpoint("termStats"), request, TermStatsRequest, TermStats, signal);
  }

  /** This shard's lists for a search (a shard only). */
  shardSearch(request: ShardSearchRequest, signal: AbortSignal): Promise<ShardSearchResponse> {
    return this.#read(this.#endpoint("shardSearch"), request, ShardSearchRequest, ShardSearchResponse, signal);
  }

  /** A document chunked and embedded by a replica of this shard, for the ingest log (a shard only). */
  prepareChunks(request: PrepareChunksRequest, signal: AbortSignal): Promise<PreparedChunks> {
    return this.#read(this.#endpoint("prepareChunks"), request, PrepareChunksRequest, PreparedChunks, signal);
  }

  #endpoint(name: keyof ReturnType<typeof indexShardNatsService>["endpoints"]): NatsEndpoint {
    const e = this.#endpoints[name];
    if (e === undefined) throw new Error(`${name} is an endpoint of an index shard; this client is for an unsharded index`);
    return e;
  }

  search(request: SearchRequest, signal: AbortSignal): Promise<SearchResponse> {
    return this.#read(this.#endpoint("search"), request, SearchRequest, SearchResponse, signal);
  }

  getChunks(request: GetChunksRequest, signal: AbortSignal): Promise<GetChunksResponse> {
    return this.#read(this.#endpoint("getChunks"), request, GetChunksRequest, GetChunksResponse, signal);
  }

  getStats(signal: AbortSignal): Promise<GetStatsResponse> {
    return this.#read(this.#endpoint("getStats"), {}, GetStatsRequest, GetStatsResponse, signal);
  }

  embedTexts(request: EmbedTextsRequest, signal: AbortSignal): Promise<EmbedTextsResponse> {
    return this.#read(this.#endpoint("embedTexts"), request, EmbedTextsRequest, EmbedTextsResponse, signal);
  }

  deleteDocument(request: DeleteDocumentRequest, signal: AbortSignal): Promise<DeleteDocumentResponse> {
    return this.#call(this.#endpoint("deleteDocument"), request, DeleteDocumentRequest, DeleteDocumentResponse, signal);
  }

  /** One document (the gRPC stream's unit over NATS). */
  ingest(request: IngestDocumentsRequest, signal: AbortSignal): Promise<IngestDocumentsResponse> {
    return this.#call(this.#endpoint("ingest"), request, IngestDocumentsRequest, IngestDocumentsResponse, signal);
  }

  /**
   * A read. On a replicated shard a replica that dies holding the request never answers it, so an unanswered
   * read is asked again (the queue group gives it to a live replica): attempts of 2 s, 4 s, 8 s … within the
   * call's timeout. Reads change nothing, so asking twice is safe.
   */
  async #read<Req, Res>(endpoint: NatsEndpoint, request: Req, req: ProtoCodec<Req>, res: ProtoCodec<Res>, signal: AbortSignal): Promise<Res> {
    if (!this.#replicated) return this.#call(endpoint, request, req, res, signal);
    const deadline = performance.now() + this.timeoutMs;
    for (let attempt = FIRST_READ_ATTEMPT_MS; ; attempt *= 2) {
      const left = deadline - performance.now();
      try {
        return await this.#call(endpoint, request, req, res, signal, Math.min(attempt, Math.max(1, left)));
      } catch (err) {
        if (!(err instanceof ServiceError) || err.code !== Code.DEADLINE_EXCEEDED || attempt >= left) throw err;
      }
    }
  }

  async #call<Req, Res>(endpoint: NatsEndpoint, request: Req, req: ProtoCodec<Req>, res: ProtoCodec<Res>, signal: AbortSignal, timeoutMs = this.timeoutMs): Promise<Res> {
    try {
      return await requestProto(this.nc, endpoint.subject, request, { request: req, response: res }, {
        timeoutMs,
        signal,
        watch: this.watch,
        serviceLabel: this.#label,
        startHint: this.#startHint,
      });
    } catch (err) {
      if (err instanceof RemoteError) throw new ServiceError(err.code, err.message, { cause: err });
      throw err;
    }
  }
}
