/** The paper's six attribution metrics, in the order tables show them. */
export const ATTRIBUTION_METRICS = ["cosine", "jaccard", "rouge1", "rouge2", "rougeL", "rougeLsum"] as const;

export type AttributionMetric = (typeof ATTRIBUTION_METRICS)[number];

export function isAttributionMetric(name: string): name is AttributionMetric {
  return (ATTRIBUTION_METRICS as readonly string[]).includes(name);
}
