// The index service over NATS: the same operations as the gRPC IndexService, on the endpoints of
// INDEX_NATS_SERVICE (queue group: requests are spread over every `attr-rag index serve --nats`). The
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
  IngestDocumentsRequest,
  IngestDocumentsResponse,
  SearchRequest,
  SearchResponse,
} from "@attr-rag/contracts";
import { serveService, type EndpointHandler, type NatsConnection, type Service } from "@attr-rag/nats";
import type { ServiceContext } from "../service/context.js";
import { deleteDocument } from "../service/deleteDocument.js";
import { embedTexts } from "../service/embedTexts.js";
import { getChunks } from "../service/getChunks.js";
import { getStats } from "../service/getStats.js";
import { ingestOne, ingestResponse } from "../service/ingestDocuments.js";
import { search } from "../service/search.js";
import { toGrpcStatus } from "../service/toGrpcStatus.js";

export async function serveIndexOverNats(nc: NatsConnection, ctx: ServiceContext): Promise<Service> {
  const e = INDEX_NATS_SERVICE.endpoints;
  const handlers: EndpointHandler<any, any>[] = [
    { endpoint: e.search, request: SearchRequest, response: SearchResponse, handle: (r: SearchRequest, signal) => search(ctx, r, signal) },
    { endpoint: e.getChunks, request: GetChunksRequest, response: GetChunksResponse, handle: async (r: GetChunksRequest) => getChunks(ctx, r) },
    { endpoint: e.getStats, request: GetStatsRequest, response: GetStatsResponse, handle: async () => getStats(ctx) },
    { endpoint: e.embedTexts, request: EmbedTextsRequest, response: EmbedTextsResponse, handle: (r: EmbedTextsRequest, signal) => embedTexts(ctx, r, signal) },
    { endpoint: e.deleteDocument, request: DeleteDocumentRequest, response: DeleteDocumentResponse, handle: async (r: DeleteDocumentRequest) => deleteDocument(ctx, r) },
    {
      endpoint: e.ingest,
      request: IngestDocumentsRequest,
      response: IngestDocumentsResponse,
      handle: async (r: IngestDocumentsRequest, signal) => {
        const started = performance.now();
        return ingestResponse([await ingestOne(ctx, r, signal)], started);
      },
    },
  ];
  return serveService(nc, INDEX_NATS_SERVICE, handlers, (err, endpoint) => {
    const { code, details } = toGrpcStatus(err, endpoint, ctx.log);
    return { code, message: details };
  });
}
