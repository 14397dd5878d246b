import { status } from "@grpc/grpc-js";
import { ServiceError } from "@attr-rag/index";
import type { NewBatch } from "./batchStore.js";

/**
 * Why a CreateBatch under an id already taken is not a repeat of the one that took it: other items, or another
 * label (a label is what a person recognises the batch by, so a second one under the same id is a mistake,
 * not a rename). Undefined when it is the same batch, and CreateBatch returns the existing one.
 */
export function batchConflict(existing: { readonly itemsSha256: string; readonly totalItems: number; readonly label: string; readonly webhookUrl?: string }, batch: NewBatch): ServiceError | undefined {
  if (existing.itemsSha256 !== batch.itemsSha256) {
    return new ServiceError(
      status.ALREADY_EXISTS,
      `batch ${batch.batchId} already exists with other items (${existing.totalItems} items, sha256 ${existing.itemsSha256.slice(0, 12)}…); choose another batch_id or resubmit the same items`,
    );
  }
  if (existing.label !== batch.label) {
    return new ServiceError(
      status.ALREADY_EXISTS,
      `batch ${batch.batchId} already exists with the label ${JSON.stringify(existing.label)}, not ${JSON.stringify(batch.label)}; choose another batch_id or resubmit with the same label`,
    );
  }
  if (existing.webhookUrl !== undefined && existing.webhookUrl !== (batch.webhookUrl ?? "")) {
    return new ServiceError(
      status.ALREADY_EXISTS,
      `batch ${batch.batchId} already exists with ${existing.webhookUrl === "" ? "no webhook" : `the webhook ${existing.webhookUrl}`}; choose another batch_id or resubmit with the same webhook_url`,
    );
  }
  return undefined;
}
