import type { DeleteDocumentRequest, DeleteDocumentResponse, IngestDocumentsRequest, IngestDocumentsResponse } from "@attr-rag/contracts";
import type { IndexBackend } from "../service/indexBackend.js";

/** The index over NATS as the distributed gateway forwards IndexService to it: one index or a sharded one. */
export interface RemoteIndex extends IndexBackend {
  deleteDocument(request: DeleteDocumentRequest, signal: AbortSignal): Promise<DeleteDocumentResponse>;
  /** One document (the gRPC stream's unit over NATS). */
  ingest(request: IngestDocumentsRequest, signal: AbortSignal): Promise<IngestDocumentsResponse>;
}
