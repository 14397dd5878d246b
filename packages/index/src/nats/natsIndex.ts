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
  type NatsEndpoint,
} from "@attr-rag/contracts";
import { RemoteError, requestProto, type ConnectionWatch, type NatsConnection, type ProtoCodec } from "@attr-rag/nats";
import type { IndexBackend } from "../service/indexBackend.js";
import { ServiceError } from "../service/ServiceError.js";

/**
 * The index reached over NATS (`attr-rag index serve --nats`): the IndexBackend the distributed gateway and
 * the selector use. Failures come back as the same ServiceError (gRPC status and message) as in-process.
 */
export class NatsIndex implements IndexBackend {
  constructor(
    private readonly nc: NatsConnection,
    private readonly watch?: ConnectionWatch,
    private readonly timeoutMs = 60_000,
  ) {}

  search(request: SearchRequest, signal: AbortSignal): Promise<SearchResponse> {
    return this.#call(INDEX_NATS_SERVICE.endpoints.search, request, SearchRequest, SearchResponse, signal);
  }

  getChunks(request: GetChunksRequest, signal: AbortSignal): Promise<GetChunksResponse> {
    return this.#call(INDEX_NATS_SERVICE.endpoints.getChunks, request, GetChunksRequest, GetChunksResponse, signal);
  }

  getStats(signal: AbortSignal): Promise<GetStatsResponse> {
    return this.#call(INDEX_NATS_SERVICE.endpoints.getStats, {}, GetStatsRequest, GetStatsResponse, signal);
  }

  embedTexts(request: EmbedTextsRequest, signal: AbortSignal): Promise<EmbedTextsResponse> {
    return this.#call(INDEX_NATS_SERVICE.endpoints.embedTexts, request, EmbedTextsRequest, EmbedTextsResponse, signal);
  }

  deleteDocument(request: DeleteDocumentRequest, signal: AbortSignal): Promise<DeleteDocumentResponse> {
    return this.#call(INDEX_NATS_SERVICE.endpoints.deleteDocument, request, DeleteDocumentRequest, DeleteDocumentResponse, signal);
  }

  /** One document (the gRPC stream's unit over NATS). */
  ingest(request: IngestDocumentsRequest, signal: AbortSignal): Promise<IngestDocumentsResponse> {
    return this.#call(INDEX_NATS_SERVICE.endpoints.ingest, request, IngestDocumentsRequest, IngestDocumentsResponse, signal);
  }

  async #call<Req, Res>(endpoint: NatsEndpoint, request: Req, req: ProtoCodec<Req>, res: ProtoCodec<Res>, signal: AbortSignal): Promise<Res> {
    try {
      return await requestProto(this.nc, endpoint.subject, request, { request: req, response: res }, {
        timeoutMs: this.timeoutMs,
        signal,
        watch: this.watch,
        serviceLabel: "the index",
        startHint: "`attr-rag index serve --store DIR --nats URL`",
      });
    } catch (err) {
      if (err instanceof RemoteError) throw new ServiceError(err.code, err.message, { cause: err });
      throw err;
    }
  }
}
