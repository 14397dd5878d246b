// How far an approximate occlusion run's attribution is from the exact run's on the same question: what a
// user checks before trusting a faster strategy (attr-rag eval occlusion, attr-rag bench occlusion).
import { spearman } from "../coalitions/rankCorrelation.js";

export interface AttributionOutcome {
  /** α per metric per set, sets in re-rank order. */
  readonly alphas: Readonly<Record<string, readonly number[]>>;
  /** Indices of the kept sets. */
  readonly kept: readonly number[];
}

export interface OcclusionAgreement {
  /** The same sets kept (order ignored). */
  readonly selectionIdentical: boolean;
  /** |kept ∩ kept'| / |kept ∪ kept'| (1 when both keep nothing). */
  readonly keptJaccard: number;
  /** Spearman rank correlation of the mean α per set; null with fewer than two sets or a constant side. */
  readonly spearman: number | null;
  /** Mean over sets of |α − α'|, per metric both runs scored. */
  readonly meanAbsDeltaAlpha: Readonly<Record<string, number>>;
}

const nullIfNaN = (x: number) => (Number.isNaN(x) ? null : x);

function meanAlphaPerSet(o: AttributionOutcome, metrics: readonly string[], n: number): number[] {
  return Array.from({ length: n }, (_, j) => metrics.reduce((s, m) => s + o.alphas[m]![j]!, 0) / metrics.length);
}

export function occlusionAgreement(exact: AttributionOutcome, approximate: AttributionOutcome): OcclusionAgreement {
  const metrics = Object.keys(exact.alphas).filter((m) => approximate.alphas[m] !== undefined);
  if (metrics.length === 0) throw new RangeError("occlusionAgreement: the two runs share no metric");
  const n = exact.alphas[metrics[0]!]!.length;
  for (const m of metrics) {
    if (exact.alphas[m]!.length !== n || approximate.alphas[m]!.length !== n) {
      throw new RangeError(`occlusionAgreement: metric ${m} has ${exact.alphas[m]!.length} and ${approximate.alphas[m]!.length} sets, expected ${n}`);
    }
  }
  const a = new Set(exact.kept);
  const b = new Set(approximate.kept);
  const inter = [...a].filter((x) => b.has(x)).length;
  const union = new Set([...a, ...b]).size;
  const meanAbsDeltaAlpha: Record<string, number> = {};
  for (const m of metrics) {
    meanAbsDeltaAlpha[m] = n === 0 ? 0 : exact.alphas[m]!.reduce((s, x, j) => s + Math.abs(x - approximate.alphas[m]![j]!), 0) / n;
  }
  return {
    selectionIdentical: inter === a.size && inter === b.size,
    keptJaccard: union === 0 ? 1 : inter / union,
    spearman: nullIfNaN(spearman(meanAlphaPerSet(exact, metrics, n), meanAlphaPerSet(approximate, metrics, n))),
    meanAbsDeltaAlpha,
  };
}
