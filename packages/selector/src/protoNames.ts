// Names of the selection metrics in the proto enum, both ways: the core's six text metrics of occlusion and
// "loglik", the log-likelihood utility (α from a coalition method, or leave-one-out beside occlusion).
import { status } from "@grpc/grpc-js";
import { AttributionMetric as ProtoMetric } from "@attr-rag/contracts";
import type { AttributionMetric } from "@attr-rag/core";
import { ServiceError } from "@attr-rag/index";

/** A column of the attribution table that selection can vote with. */
export type SelectionMetric = AttributionMetric | "loglik";

const METRICS: readonly [SelectionMetric, ProtoMetric][] = [
  ["cosine", ProtoMetric.ATTRIBUTION_METRIC_COSINE],
  ["jaccard", ProtoMetric.ATTRIBUTION_METRIC_JACCARD],
  ["rouge1", ProtoMetric.ATTRIBUTION_METRIC_ROUGE1],
  ["rouge2", ProtoMetric.ATTRIBUTION_METRIC_ROUGE2],
  ["rougeL", ProtoMetric.ATTRIBUTION_METRIC_ROUGE_L],
  ["rougeLsum", ProtoMetric.ATTRIBUTION_METRIC_ROUGE_LSUM],
  ["loglik", ProtoMetric.ATTRIBUTION_METRIC_LOG_LIKELIHOOD],
];

export function metricToProto(m: SelectionMetric): ProtoMetric {
  return METRICS.find(([name]) => name === m)![1];
}

export function metricFromProto(m: ProtoMetric): SelectionMetric {
  const hit = METRICS.find(([, value]) => value === m);
  if (hit === undefined) {
    throw new ServiceError(status.INVALID_ARGUMENT, `selection.metrics: ${String(m)} is not an attribution metric; use COSINE, JACCARD, ROUGE1, ROUGE2, ROUGE_L, ROUGE_LSUM or LOG_LIKELIHOOD`);
  }
  return hit[0];
}
