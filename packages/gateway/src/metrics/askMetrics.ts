import type { StageTimings } from "@attr-rag/contracts";
import { histogram, SECONDS_BUCKETS } from "@attr-rag/telemetry";

/** StageTimings' fields and the stage label each gets, in pipeline order. */
const STAGES: readonly [keyof StageTimings, string][] = [
  ["retrieveMs", "retrieve"],
  ["alignMs", "align"],
  ["rerankMs", "rerank"],
  ["initialAnswerMs", "initial_answer"],
  ["occlusionMs", "occlusion"],
  ["attributionMs", "attribution"],
  ["selectionMs", "selection"],
  ["gapFillMs", "gap_fill"],
  ["finalAnswerMs", "final_answer"],
];

export const ASK_STAGES: readonly string[] = STAGES.map(([, s]) => s);

const stageSeconds = () =>
  histogram({
    name: "attr_rag_ask_stage_duration_seconds",
    help: "Time each pipeline stage of an Ask or Attribute took (retrieve, align, rerank, initial_answer, occlusion, attribution, selection, gap_fill, final_answer).",
    labelNames: ["rpc", "stage"],
    buckets: SECONDS_BUCKETS,
  });

const totalSeconds = () =>
  histogram({
    name: "attr_rag_ask_duration_seconds",
    help: "End to end time of an Ask or Attribute that finished, from its acceptance (queue time included) to its last event; batch items included.",
    labelNames: ["rpc", "baseline"],
    buckets: SECONDS_BUCKETS,
  });

/** Records a finished Ask's (or Attribute's) stage timings, read from its `done` event. */
export function observeAskTimings(rpc: "Ask" | "Attribute", baseline: string, timings: StageTimings | undefined): void {
  if (timings === undefined) return;
  for (const [field, stage] of STAGES) {
    const ms = timings[field];
    if (typeof ms === "number") stageSeconds().observe({ rpc, stage }, ms / 1000);
  }
  totalSeconds().observe({ rpc, baseline }, timings.totalMs / 1000);
}
