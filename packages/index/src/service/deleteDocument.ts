import type { DeleteDocumentRequest, DeleteDocumentResponse } from "@attr-rag/contracts";
import { DocumentNotFoundError } from "../errors.js";
import type { ServiceContext } from "./context.js";
import { invalidArgument } from "./ServiceError.js";
import { unaryHandler } from "./unaryHandler.js";

/** DeleteDocument: idempotent as the proto says; an absent document is `found: false`, not an error. */
export function deleteDocument(ctx: ServiceContext, { docId }: DeleteDocumentRequest): DeleteDocumentResponse {
  if (docId.length === 0) throw invalidArgument("doc_id is empty");
  const existing = ctx.store.getDocument(docId);
  if (existing === undefined) return { found: false, chunksDeleted: 0 };
  try {
    ctx.store.deleteDocument(docId);
  } catch (err) {
    if (err instanceof DocumentNotFoundError) return { found: false, chunksDeleted: 0 };
    throw err;
  }
  return { found: true, chunksDeleted: existing.chunkCount };
}

export function deleteDocumentHandler(ctx: ServiceContext) {
  return unaryHandler<DeleteDocumentRequest, DeleteDocumentResponse>(ctx, "DeleteDocument", (request) => deleteDocument(ctx, request));
}
