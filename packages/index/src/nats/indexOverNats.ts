// The index service over NATS: the same operations as the gRPC IndexService, on the endpoints of
// INDEX_NATS_SERVICE (queue group: requests are spread over every `attr-rag index serve --nats`), or of one
// shard of a sharded index (indexShardNatsService: those plus termStats and shardSearch). The
// client-streaming IngestDocuments becomes one request per document.
import { status } from "@grpc/grpc-js";
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
  SearchRequest,
  SearchResponse,
  ShardSearchRequest,
  ShardSearchResponse,
  TermStats,
  TermStatsRequest,
  type NatsServiceInfo,
} from "@attr-rag/contracts";
import { shardOf, type ShardSpec } from "@attr-rag/core";
import { serveService, type EndpointHandler, type NatsConnection, type Service } from "@attr-rag/nats";
import type { ServiceContext } from "../service/context.js";
import { deleteDocument } from "../service/deleteDocument.js";
import { embedTexts } from "../service/embedTexts.js";
import { getChunks } from "../service/getChunks.js";
import { getStats } from "../service/getStats.js";
import { ingestOne, ingestResponse } from "../service/ingestDocuments.js";
import { search } from "../service/search.js";
import { ServiceError } from "../service/ServiceError.js";
import { shardSearch, termStats } from "../service/shardSearch.js";
import { toGrpcStatus } from "../service/toGrpcStatus.js";

type IndexEndpoints = NatsServiceInfo<"ingest" | "search" | "getChunks" | "deleteDocument" | "getStats" | "embedTexts">["endpoints"];

function indexHandlers(ctx: ServiceContext, e: IndexEndpoints, ownsDocument: (docId: string) => void): EndpointHandler<any, any>[] {
  return [
    { endpoint: e.search, request: SearchRequest, response: SearchResponse, handle: (r: SearchRequest, signal) => search(ctx, r, signal) },
    { endpoint: e.getChunks, request: GetChunksRequest, response: GetChunksResponse, handle: async (r: GetChunksRequest) => getChunks(ctx, r) },
    { endpoint: e.getStats, request: GetStatsRequest, response: GetStatsResponse, handle: async () => getStats(ctx) },
    { endpoint: e.embedTexts, request: EmbedTextsRequest, response: EmbedTextsResponse, handle: (r: EmbedTextsRequest, signal) => embedTexts(ctx, r, signal) },
    {
      endpoint: e.deleteDocument,
      request: DeleteDocumentRequest,
      response: DeleteDocumentResponse,
      handle: async (r: DeleteDocumentRequest) => {
        ownsDocument(r.docId);
        return deleteDocument(ctx, r);
      },
    },
    {
      endpoint: e.ingest,
      request: IngestDocumentsRequest,
      response: IngestDocumentsResponse,
      handle: async (r: IngestDocumentsRequest, signal) => {
        ownsDocument(r.document?.id ?? "");
        const started = performance.now();
        return ingestResponse([await ingestOne(ctx, r, signal)], started);
      },
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
  return serve(nc, ctx, INDEX_NATS_SERVICE, indexHandlers(ctx, INDEX_NATS_SERVICE.endpoints, () => {}));
}

/**
 * One shard of a sharded index on NATS. It refuses documents of another shard (shardOf decides), so a store
 * never holds a document the gateway would look for elsewhere.
 */
export async function serveIndexShardOverNats(nc: NatsConnection, ctx: ServiceContext, spec: ShardSpec): Promise<Service> {
  const info = indexShardNatsService(spec.shard, spec.shards);
  const ownsDocument = (docId: string) => {
    if (docId === "") return; // the operation's own validation names the missing id
    const home = shardOf(docId, spec.shards);
    if (home !== spec.shard) {
      throw new ServiceError(status.FAILED_PRECONDITION, `document ${JSON.stringify(docId)} belongs to shard ${home} of ${spec.shards}, not to this shard (${spec.shard}); send it through the gateway, which routes by document id`);
    }
  };
  const e = info.endpoints;
  return serve(nc, ctx, info, [
    ...indexHandlers(ctx, e, ownsDocument),
    { endpoint: e.termStats, request: TermStatsRequest, response: TermStats, handle: async (r: TermStatsRequest) => termStats(ctx, r) },
    { endpoint: e.shardSearch, request: ShardSearchRequest, response: ShardSearchResponse, handle: (r: ShardSearchRequest, signal) => shardSearch(ctx, r, signal) },
  ]);
}
