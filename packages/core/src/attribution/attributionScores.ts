import { cosineSimilarity } from "../metrics/cosine.js";
import { jaccardSimilarity } from "../metrics/jaccard.js";
import { rougeScores } from "../metrics/rouge.js";
import { ATTRIBUTION_METRICS, isAttributionMetric, type AttributionMetric } from "./attributionMetrics.js";

export interface AttributionInput {
  /** A_full: the answer from all chunk sets. */
  readonly full: string;
  /** A_-j for each chunk set j, in re-rank order. */
  readonly occluded: readonly string[];
  /** Sentence embeddings of A_full and each A_-j; required when "cosine" is among the metrics. */
  readonly embeddings?: { readonly full: ArrayLike<number>; readonly occluded: readonly ArrayLike<number>[] };
  /** Default: all six of the paper. */
  readonly metrics?: readonly AttributionMetric[];
  /** Porter-stem tokens for ROUGE and Jaccard (rouge-score's `use_stemmer`). Default false. */
  readonly stemmer?: boolean;
}

/** α per metric per set: `alphas[metric][j]` is α_metric(S_j). */
export interface AttributionTable {
  readonly metrics: readonly AttributionMetric[];
  readonly alphas: Readonly<Record<string, readonly number[]>>;
}

/**
 * α_M(S_j) = 1 − sim_M(A_full, A_-j): how much the answer changed when S_j was left out. A_full plays the
 * reference (rouge-score's target) and A_-j the candidate; ROUGE uses F1. Cosine α lies in [0, 2] since
 * embeddings can point apart; the other metrics give α in [0, 1].
 */
export function attributionScores(input: AttributionInput): AttributionTable {
  const metrics = input.metrics ?? ATTRIBUTION_METRICS;
  if (metrics.length === 0) throw new RangeError("attributionScores: at least one metric is needed");
  for (const m of metrics) {
    if (!isAttributionMetric(m)) {
      throw new RangeError(`attributionScores: unknown metric "${m}"; use one of ${ATTRIBUTION_METRICS.join(", ")}`);
    }
  }
  const n = input.occluded.length;
  if (metrics.includes("cosine")) {
    if (!input.embeddings) {
      throw new RangeError("attributionScores: the cosine metric needs embeddings of A_full and every A_-j");
    }
    if (input.embeddings.occluded.length !== n) {
      throw new RangeError(`attributionScores: ${input.embeddings.occluded.length} occluded embeddings for ${n} occluded answers`);
    }
  }
  const stemmer = input.stemmer ?? false;
  const rouge = metrics.some((m) => m.startsWith("rouge"))
    ? input.occluded.map((answer) => rougeScores(input.full, answer, { stemmer }))
    : [];
  const alphas: Record<string, number[]> = {};
  for (const m of metrics) {
    alphas[m] = input.occluded.map((answer, j) => {
      switch (m) {
        case "cosine":
          return 1 - cosineSimilarity(input.embeddings!.full, input.embeddings!.occluded[j]!);
        case "jaccard":
          return 1 - jaccardSimilarity(input.full, answer, { stemmer });
        default:
          return 1 - rouge[j]![m].fmeasure;
      }
    });
  }
  return { metrics: [...metrics], alphas };
}
