import { AttributionMetric, attributionMetricToJSON } from "@attr-rag/contracts";

interface MetricStyle {
  readonly name: string;
  readonly colour: string;
}

// Colours are fixed per metric (not per column position) so the same metric looks the same in every report.
// Okabe–Ito palette: distinguishable with the common colour-vision deficiencies and in greyscale print.
const STYLES: ReadonlyMap<AttributionMetric, MetricStyle> = new Map([
  [AttributionMetric.ATTRIBUTION_METRIC_COSINE, { name: "cosine", colour: "#0072B2" }],
  [AttributionMetric.ATTRIBUTION_METRIC_JACCARD, { name: "jaccard", colour: "#E69F00" }],
  [AttributionMetric.ATTRIBUTION_METRIC_ROUGE1, { name: "rouge1", colour: "#009E73" }],
  [AttributionMetric.ATTRIBUTION_METRIC_ROUGE2, { name: "rouge2", colour: "#CC79A7" }],
  [AttributionMetric.ATTRIBUTION_METRIC_ROUGE_L, { name: "rougeL", colour: "#56B4E9" }],
  [AttributionMetric.ATTRIBUTION_METRIC_ROUGE_LSUM, { name: "rougeLsum", colour: "#D55E00" }],
  [AttributionMetric.ATTRIBUTION_METRIC_LOG_LIKELIHOOD, { name: "log-likelihood", colour: "#4D4D4D" }],
]);

const UNKNOWN_COLOUR = "#999999";

/** Short metric name used in labels and data-metric attributes ("rougeLsum", "log-likelihood"). */
export function metricName(metric: AttributionMetric): string {
  return STYLES.get(metric)?.name ?? attributionMetricToJSON(metric).replace(/^ATTRIBUTION_METRIC_/, "").toLowerCase();
}

export function metricColour(metric: AttributionMetric): string {
  return STYLES.get(metric)?.colour ?? UNKNOWN_COLOUR;
}
