import { BatchItemState } from "@attr-rag/contracts";
import { counter, gauge, MetricSources } from "@attr-rag/telemetry";

const STATE_LABELS: Partial<Record<BatchItemState, string>> = {
  [BatchItemState.BATCH_ITEM_STATE_SUCCEEDED]: "succeeded",
  [BatchItemState.BATCH_ITEM_STATE_FAILED]: "failed",
  [BatchItemState.BATCH_ITEM_STATE_CANCELLED]: "cancelled",
};

const finished = () =>
  counter({
    name: "attr_rag_batch_items_total",
    help: "Batch items this gateway ran to an end, by final state (succeeded, failed, cancelled); rate() × 60 is items per minute.",
    labelNames: ["state"],
  });

const retried = () =>
  counter({
    name: "attr_rag_batch_item_retries_total",
    help: "Batch item runs handed back to the queue to run again (an engine or selector was unavailable or timed out).",
  });

/** Something that knows how many batch items it is running (a BatchRunner). */
export interface RunningItems {
  readonly running: number;
}

export const batchRunners = new MetricSources<RunningItems>(registerBatchMetrics);

export function countBatchItem(state: BatchItemState): void {
  finished().inc({ state: STATE_LABELS[state] ?? "unknown" });
}

export function countBatchRetry(): void {
  retried().inc();
}

function registerBatchMetrics(): void {
  gauge({
    name: "attr_rag_batch_items_running",
    help: "Batch items this gateway is running now.",
    collect() {
      this.set(batchRunners.items.reduce((n, r) => n + r.running, 0));
    },
  });
  // The counters exist from the start (at 0), so a dashboard's rate() has a series before the first item ends.
  for (const state of Object.values(STATE_LABELS)) finished().inc({ state }, 0);
  retried();
}
