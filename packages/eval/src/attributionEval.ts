// RQ1 and RQ2 of the Shapley document-attribution study, on one example whose utility is known for every
// coalition (scored once, 2^n values): each method runs against that table, so methods cost no extra engine
// work and their utility-call counts are what they would cost on the engine.
import { attributeCoalitions, coalitionOfMask, kendallTau, popcount, spearman, type CoalitionMethod } from "@attr-rag/core";

export const EVAL_METHODS: readonly CoalitionMethod[] = ["shapley", "leave-one-out", "kernel-shap", "tmc-shapley", "beta-shapley", "contextcite"];

export interface MethodOutcome {
  readonly scores: readonly number[];
  readonly utilityCalls: number;
  /** RQ1: rank agreement with exact Shapley (NaN when either ranking is constant). */
  readonly spearman: number;
  readonly kendall: number;
  /** RQ2: precision@k against the k sets whose joint removal drops v the most, k = 1..kMax. */
  readonly precisionAt: readonly number[];
  /** Both positive passages are the method's two highest-scored sets. */
  readonly positivesTop2: boolean;
}

/** The size-k coalition S maximising v(N) − v(N ∖ S), found by trying them all. */
export function exhaustiveTopK(n: number, values: ArrayLike<number>, k: number): number[] {
  const full = (1 << n) - 1;
  let best = -Infinity;
  let bestMask = 0;
  for (let mask = 0; mask <= full; mask++) {
    if (popcount(mask) !== k) continue;
    const drop = values[full]! - values[full & ~mask]!;
    if (drop > best) {
      best = drop;
      bestMask = mask;
    }
  }
  return coalitionOfMask(bestMask, n);
}

/** The k highest scores' indices (ties to the earlier set). */
export function topK(scores: readonly number[], k: number): number[] {
  return scores.map((s, i) => [s, i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, k).map(([, i]) => i);
}

export async function evaluateExample(
  n: number,
  values: ArrayLike<number>,
  positives: readonly number[],
  options: { samples: number; seed: number; kMax: number },
): Promise<Record<string, MethodOutcome>> {
  if (values.length !== 1 << n) throw new RangeError(`${values.length} utility values for ${n} sets (need 2^n)`);
  const lookup = async (coalitions: readonly (readonly number[])[]) => coalitions.map((c) => values[c.reduce((m, i) => m | (1 << i), 0)]!);
  const runs = new Map<CoalitionMethod, { scores: readonly number[]; utilityCalls: number }>();
  for (const method of EVAL_METHODS) {
    const r = await attributeCoalitions(n, lookup, { method, samples: options.samples, seed: options.seed });
    runs.set(method, r);
  }
  const exact = runs.get("shapley")!.scores;
  const ks = Array.from({ length: Math.min(options.kMax, n - 1) }, (_, i) => i + 1);
  const best = ks.map((k) => new Set(exhaustiveTopK(n, values, k)));
  const out: Record<string, MethodOutcome> = {};
  for (const [method, r] of runs) {
    const top2 = new Set(topK(r.scores, 2));
    out[method] = {
      scores: r.scores,
      utilityCalls: r.utilityCalls,
      spearman: spearman(r.scores, exact),
      kendall: kendallTau(r.scores, exact),
      precisionAt: ks.map((k, i) => topK(r.scores, k).filter((j) => best[i]!.has(j)).length / k),
      positivesTop2: positives.every((p) => top2.has(p)),
    };
  }
  return out;
}
