// Names of the core's attribution metrics in the proto enum, both ways.
import { status } from "@grpc/grpc-js";
import { AttributionMetric as ProtoMetric } from "@attr-rag/contracts";
import type { AttributionMetric } from "@attr-rag/core";
import { ServiceError } from "@attr-rag/index";

const METRICS: readonly [AttributionMetric, ProtoMetric][] = [
  ["cosine", ProtoMetric.ATTRIBUTION_METRIC_COSINE],
  ["jaccard", ProtoMetric.ATTRIBUTION_METRIC_JACCARD],
  ["rouge1", ProtoMetric.ATTRIBUTION_METRIC_ROUGE1],
  ["rouge2", ProtoMetric.ATTRIBUTION_METRIC_ROUGE2],
  ["rougeL", ProtoMetric.ATTRIBUTION_METRIC_ROUGE_L],
  ["rougeLsum", ProtoMetric.ATTRIBUTION_METRIC_ROUGE_LSUM],
];

export function metricToProto(m: AttributionMetric): ProtoMetric {
  return METRICS.find(([name]) => name === m)![1];
}

export function metricFromProto(m: ProtoMetric): AttributionMetric {
  const hit = METRICS.find(([, value]) => value === m);
  if (hit === undefined) {
    throw new ServiceError(status.INVALID_ARGUMENT, `selection.metrics: ${String(m)} is not an occlusion metric; use COSINE, JACCARD, ROUGE1, ROUGE2, ROUGE_L or ROUGE_LSUM`);
  }
  return hit[0];
}
