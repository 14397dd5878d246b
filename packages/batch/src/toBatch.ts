import { Batch, BatchState, type WebhookDelivery } from "@attr-rag/contracts";
import type { BatchItemCounts, BatchLifecycle, BatchThroughput } from "@attr-rag/core";

const STATES: Record<BatchLifecycle, BatchState> = {
  submitting: BatchState.BATCH_STATE_SUBMITTING,
  running: BatchState.BATCH_STATE_RUNNING,
  cancelling: BatchState.BATCH_STATE_CANCELLING,
  completed: BatchState.BATCH_STATE_COMPLETED,
  cancelled: BatchState.BATCH_STATE_CANCELLED,
};

/** Whether a batch in this state has ended (every item has its result). */
export function hasEnded(state: BatchState): boolean {
  return state === BatchState.BATCH_STATE_COMPLETED || state === BatchState.BATCH_STATE_CANCELLED;
}

/** The Batch message both stores answer with. */
export function toBatch(o: {
  batchId: string;
  label: string;
  itemsSha256: string;
  total: number;
  createdMs: number;
  finishedMs?: number;
  counts: BatchItemCounts;
  lifecycle: BatchLifecycle;
  throughput: BatchThroughput;
  webhookUrl?: string;
  webhook?: WebhookDelivery;
}): Batch {
  const ended = o.lifecycle === "completed" || o.lifecycle === "cancelled";
  return Batch.fromPartial({
    batchId: o.batchId,
    state: STATES[o.lifecycle],
    totalItems: o.total,
    counts: { ...o.counts },
    createdUnixMs: o.createdMs,
    ...(ended && o.finishedMs !== undefined ? { finishedUnixMs: o.finishedMs } : {}),
    itemsPerMinute: o.throughput.itemsPerMinute,
    ...(!ended && o.throughput.etaSeconds !== undefined ? { etaSeconds: o.throughput.etaSeconds } : {}),
    label: o.label,
    itemsSha256: o.itemsSha256,
    webhookUrl: o.webhookUrl ?? "",
    ...(o.webhook !== undefined ? { webhook: o.webhook } : {}),
  });
}
