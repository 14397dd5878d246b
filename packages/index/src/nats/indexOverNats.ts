// The index service over NATS: the same operations as the gRPC IndexService, on the endpoints of
// INDEX_NATS_SERVICE (queue group: requests are spread over every `attr-rag index serve --nats`), or of one
// shard of a sharded index (indexShardNatsService: those plus termStats and shardSearch). The
// client-streaming IngestDocuments becomes one request per document.
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
  indexShardNatsService,
  IngestDocumentsRequest,
  IngestDocumentsResponse,
  PrepareChunksRequest,
  PreparedChunks,
  SearchRequest,
  SearchResponse,
  ShardSearchRequest,
  ShardSearchResponse,
  TermStats,
  TermStatsRequest,
  type NatsServiceInfo,
} from "@attr-rag/contracts";
import type { ShardSpec } from "@attr-rag/core";
import { serveService, type EndpointHandler, type NatsConnection, type Service } from "@attr-rag/nats";
import type { ServiceContext } from "../service/context.js";
import { deleteDocument } from "../service/deleteDocument.js";
import { embedTexts } from "../service/embedTexts.js";
import { getChunks } from "../service/getChunks.js";
import { getStats } from "../service/getStats.js";
import { ingestOne, ingestResponse } from "../service/ingestDocuments.js";
import { search } from "../service/search.js";
import { prepareChunks, shardSearch, termStats } from "../service/shardSearch.js";
import { toGrpcStatus } from "../service/toGrpcStatus.js";

type IndexEndpoints = NatsServiceInfo<"ingest" | "search" | "getChunks" | "deleteDocument" | "getStats" | "embedTexts">["endpoints"];

/** Where a served index writes: its own store, or (a replica of a shard) the ingest log. */
interface Writes {
  ingest(r: IngestDocumentsRequest, signal: AbortSignal): Promise<IngestDocumentsResponse>;
  deleteDocument(r: DeleteDocumentRequest, signal: AbortSignal): Promise<DeleteDocumentResponse>;
}

function storeWrites(ctx: ServiceContext): Writes {
  return {
    ingest: async (r, signal) => {
      const started = performance.now();
      return ingestResponse([await ingestOne(ctx, r, signal)], started);
    },
    deleteDocument: async (r) => deleteDocument(ctx, r),
  };
}

function indexHandlers(ctx: ServiceContext, e: IndexEndpoints, writes: Writes): EndpointHandler<any, any>[] {
  return [
    { endpoint: e.search, request: SearchRequest, response: SearchResponse, handle: (r: SearchRequest, signal) => search(ctx, r, signal) },
    { endpoint: e.getChunks, request: GetChunksRequest, response: GetChunksResponse, handle: async (r: GetChunksRequest) => getChunks(ctx, r) },
    { endpoint: e.getStats, request: GetStatsRequest, response: GetStatsResponse, handle: async () => getStats(ctx) },
    { endpoint: e.embedTexts, request: EmbedTextsRequest, response: EmbedTextsResponse, handle: (r: EmbedTextsRequest, signal) => embedTexts(ctx, r, signal) },
    {
      endpoint: e.deleteDocument,
      request: DeleteDocumentRequest,
      response: DeleteDocumentResponse,
      handle: (r: DeleteDocumentRequest, signal) => writes.deleteDocument(r, signal),
    },
    {
      endpoint: e.ingest,
      request: IngestDocumentsRequest,
      response: IngestDocumentsResponse,
      handle: (r: IngestDocumentsRequest, signal) => writes.ingest(r, signal),
    },
  ];
}

function serve(nc: NatsConnection, ctx: ServiceContext, info: NatsServiceInfo<string>, handlers: EndpointHandler<any, any>[]): Promise<Service> {
  return serveService(nc, info, handlers, (err, endpoint) => {
    const { code, details } = toGrpcStatus(err, endpoint, ctx.log);
    return { code, message: details };
  });
}

export async function serveIndexOverNats(nc: NatsConnection, ctx: ServiceContext): Promise<Service> {
  return serve(nc, ctx, INDEX_NATS_SERVICE, indexHandlers(ctx, INDEX_NATS_SERVICE.endpoints, storeWrites(ctx)));
}

/**
 * One replica of one shard of a replicated index on NATS: searches and reads from its store, writes into the
 * ingest log (`writes`: the gateway's own path, so a document ingested here reaches every replica of its
 * shard, whichever shard that is). The store itself changes only through the log (IndexLogFollower).
 */
export async function serveIndexShardOverNats(nc: NatsConnection, ctx: ServiceContext, spec: ShardSpec, writes: Writes): Promise<Service> {
  const info = indexShardNatsService(spec.shard, spec.shards);
  const e = info.endpoints;
  return serve(nc, ctx, info, [
    ...indexHandlers(ctx, e, writes),
    { endpoint: e.termStats, request: TermStatsRequest, response: TermStats, handle: async (r: TermStatsRequest) => termStats(ctx, r) },
    { endpoint: e.shardSearch, request: ShardSearchRequest, response: ShardSearchResponse, handle: (r: ShardSearchRequest, signal) => shardSearch(ctx, r, signal) },
    { endpoint: e.prepareChunks, request: PrepareChunksRequest, response: PreparedChunks, handle: (r: PrepareChunksRequest, signal) => prepareChunks(ctx, r, signal) },
  ]);
}
