// Names of the selection metrics in the proto enum, both ways: the core's six text metrics of occlusion and
// "loglik", the log-likelihood utility (α from a coalition method, or leave-one-out beside occlusion); and the
// attribution methods' names (the command line's and the core's) in the proto enum, which the pipeline,
// batch results and the CLI all speak.
import { status } from "@grpc/grpc-js";
import { AttributionMethod, AttributionMetric as ProtoMetric } from "@attr-rag/contracts";
import type { AttributionMetric, CoalitionMethod } from "@attr-rag/core";
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

/** The coalition method each proto attribution method names (occlusion is not a coalition method). */
export const COALITION_METHOD_OF: Partial<Record<AttributionMethod, CoalitionMethod>> = {
  [AttributionMethod.ATTRIBUTION_METHOD_LEAVE_ONE_OUT_LOGLIK]: "leave-one-out",
  [AttributionMethod.ATTRIBUTION_METHOD_SHAPLEY_EXACT]: "shapley",
  [AttributionMethod.ATTRIBUTION_METHOD_KERNEL_SHAP]: "kernel-shap",
  [AttributionMethod.ATTRIBUTION_METHOD_TMC_SHAPLEY]: "tmc-shapley",
  [AttributionMethod.ATTRIBUTION_METHOD_BETA_SHAPLEY]: "beta-shapley",
  [AttributionMethod.ATTRIBUTION_METHOD_CONTEXTCITE]: "contextcite",
};

export function methodToProto(method: "occlusion" | CoalitionMethod): AttributionMethod {
  if (method === "occlusion") return AttributionMethod.ATTRIBUTION_METHOD_OCCLUSION;
  return Number(Object.entries(COALITION_METHOD_OF).find(([, name]) => name === method)![0]) as AttributionMethod;
}
