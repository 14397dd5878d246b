// The event a batch's webhook receives when the batch ends: small, and the same whichever gateway sends it.
import type { BatchItemCounts } from "@attr-rag/core";

export type BatchEndedType = "batch.completed" | "batch.failed" | "batch.cancelled";

/** cancelled when it was cancelled; failed when no item succeeded and some failed; completed otherwise. */
export function batchEndedType(cancelled: boolean, counts: BatchItemCounts): BatchEndedType {
  if (cancelled) return "batch.cancelled";
  return counts.succeeded === 0 && counts.failed > 0 ? "batch.failed" : "batch.completed";
}

/** The event id: one per batch end (a batch ends once), which receivers dedupe on (webhook-id). */
export function batchEndedEventId(batchId: string): string {
  return `evt_batch_${batchId}_ended`;
}

/** The body POSTed, as sent (the signature covers these exact bytes). */
export function batchEndedBody(batchId: string, type: BatchEndedType, endedMs: number, total: number, counts: BatchItemCounts): string {
  return JSON.stringify({
    id: batchEndedEventId(batchId),
    type,
    created_at: Math.floor(endedMs / 1000),
    data: { id: batchId, total_items: total, counts: { succeeded: counts.succeeded, failed: counts.failed, cancelled: counts.cancelled } },
  });
}
