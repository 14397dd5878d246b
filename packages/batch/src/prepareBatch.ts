import { createHash, randomUUID } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { AskRequest, isBatchId, type BatchItem, type CreateBatchRequest } from "@attr-rag/contracts";
import { ServiceError } from "@attr-rag/index";
import type { NewBatch } from "./batchStore.js";

export const MAX_ITEM_ID_CHARS = 256;
export const MAX_LABEL_CHARS = 256;

const invalid = (message: string) => new ServiceError(status.INVALID_ARGUMENT, message);

/**
 * Checks what would make the batch as a whole unusable (its id, no items, too many, item ids that are missing,
 * not text or repeated) and fixes its identity. Each item's Ask is not checked here: a bad question, k or
 * method ends that item with its own status when it runs, and never fails the batch.
 */
export function prepareBatch(request: CreateBatchRequest, limits: { readonly maxBatchItems: number }, nowMs = Date.now()): NewBatch {
  const batchId = request.batchId === "" ? randomUUID() : request.batchId;
  if (!isBatchId(batchId)) throw invalid(`batch_id must be 1-64 letters, digits, '-' or '_', got ${JSON.stringify(batchId.slice(0, 80))}`);
  if (request.items.length === 0) throw invalid("a batch needs at least one item");
  if (request.items.length > limits.maxBatchItems) {
    throw invalid(`the batch has ${request.items.length} items; this server takes at most ${limits.maxBatchItems} per batch (split it, or raise maxBatchItems)`);
  }
  if (request.label.length > MAX_LABEL_CHARS) throw invalid(`label has ${request.label.length} characters; at most ${MAX_LABEL_CHARS}`);
  const seen = new Map<string, number>();
  const items: BatchItem[] = request.items.map((item, index) => {
    const id = item.itemId;
    if (id === "" || id.length > MAX_ITEM_ID_CHARS) throw invalid(`items[${index}].item_id must be 1-${MAX_ITEM_ID_CHARS} characters, got ${id.length}`);
    if (/\p{Cc}/u.test(id)) throw invalid(`items[${index}].item_id ${JSON.stringify(id.slice(0, 80))} contains a control character`);
    const earlier = seen.get(id);
    if (earlier !== undefined) throw invalid(`items[${index}].item_id ${JSON.stringify(id.slice(0, 80))} repeats items[${earlier}]'s; item ids must be unique in a batch`);
    seen.set(id, index);
    return { itemId: id, request: item.request ?? AskRequest.create() };
  });
  return { batchId, label: request.label, itemsSha256: itemsDigest(items), items, createdUnixMs: nowMs };
}

/**
 * SHA-256 over each item's id and its Ask's protobuf encoding (length-prefixed). Decoding and re-encoding
 * normalises what a client may encode differently (field order, explicit defaults), so the same items give
 * the same digest from any client.
 */
export function itemsDigest(items: readonly BatchItem[]): string {
  const hash = createHash("sha256");
  const length = Buffer.alloc(4);
  const add = (bytes: Uint8Array) => {
    length.writeUInt32BE(bytes.length);
    hash.update(length).update(bytes);
  };
  for (const item of items) {
    add(Buffer.from(item.itemId, "utf8"));
    add(AskRequest.encode(item.request ?? AskRequest.create()).finish());
  }
  return hash.digest("hex");
}
