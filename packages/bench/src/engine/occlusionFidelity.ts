// How an approximate strategy's run compares with an exact one on the same prompt: answers token by token,
// next-token distributions along the exact answers (teacher-forced), α per text metric and the selection.
import { compareSequences, type ApproximateStrategy, type EngineContext, type OcclusionResult, type TokenSegments } from "@attr-rag/engine";
import { ATTRIBUTION_METRICS, attributionScores, occlusionAgreement, selectChunkSets } from "@attr-rag/core";

/** Cosine α needs an embedding model the bench does not load; the other five metrics are text-only. */
export const TEXT_METRICS = ATTRIBUTION_METRICS.filter((m) => m !== "cosine");

export interface Fidelity {
  /** The exact strategy compared with. */
  reference: string;
  /** Fraction of occluded answers token-identical to the reference's. */
  occluded_identical: number;
  /** Mean first step where an occluded answer differs (over those that differ); null when none does. */
  mean_first_divergence: number | null;
  /**
   * Mean KL(exact ‖ approximate) and top-1 agreement of next-token distributions along the exact answers; null
   * for screen, whose regenerated answers are exact and whose screened ones are not decoded at all, and null
   * when no step was compared (every exact answer empty): nothing measured is never reported as perfect.
   */
  mean_kl: number | null;
  top1_agreement: number | null;
  /** Mean |Δα| per text metric, α = 1 − sim(A_full, A_-j). */
  mean_abs_delta_alpha: Record<string, number>;
  /** Same kept sets under the paper's selection (text metrics), Jaccard of the kept sets, Spearman of mean α. */
  selection_identical: boolean;
  kept_jaccard: number;
  alpha_spearman: number | null;
}

/** Per-step means of the forced pairs' KL and top-1 agreement; null for both when no step was compared. */
export function forcedStepMeans(perSet: readonly { steps: number; kl: number; top1Agree: number }[]): { meanKl: number | null; top1Agreement: number | null } {
  const steps = perSet.reduce((s, p) => s + p.steps, 0);
  if (steps === 0) return { meanKl: null, top1Agreement: null };
  return { meanKl: perSet.reduce((s, p) => s + p.kl, 0) / steps, top1Agreement: perSet.reduce((s, p) => s + p.top1Agree, 0) / steps };
}

function outcome(r: OcclusionResult) {
  const { alphas } = attributionScores({ full: r.full.text, occluded: r.occluded.map((o) => o.text), metrics: TEXT_METRICS });
  const sets = r.occluded.map((_, i) => ({ id: `s${i}` }));
  return { alphas, kept: selectChunkSets({ sets, metrics: TEXT_METRICS, alphas }).kept };
}

export async function measureFidelity(
  ctx: EngineContext,
  segments: TokenSegments,
  exact: { name: string; result: OcclusionResult },
  approx: { strategy: ApproximateStrategy | "screen"; tailTokens?: number; result: OcclusionResult },
): Promise<Fidelity> {
  const ref = exact.result;
  const cmp = compareSequences(ref.occluded, approx.result.occluded);
  const forced =
    approx.strategy === "screen"
      ? undefined
      : await ctx.forced({
          segments,
          strategy: approx.strategy,
          ...(approx.tailTokens !== undefined ? { tailTokens: approx.tailTokens } : {}),
          full: ref.full.tokens,
          forced: ref.occluded.map((o) => o.tokens),
          pairExact: true,
        });
  const means = forced === undefined ? { meanKl: null, top1Agreement: null } : forcedStepMeans(forced.perSet);
  const agreement = occlusionAgreement(outcome(ref), outcome(approx.result));
  return {
    reference: exact.name,
    occluded_identical: cmp.identical / cmp.total,
    mean_first_divergence: cmp.divergences.length === 0 ? null : cmp.divergences.reduce((s, d) => s + d.step, 0) / cmp.divergences.length,
    mean_kl: means.meanKl,
    top1_agreement: means.top1Agreement,
    mean_abs_delta_alpha: { ...agreement.meanAbsDeltaAlpha },
    selection_identical: agreement.selectionIdentical,
    kept_jaccard: agreement.keptJaccard,
    alpha_spearman: agreement.spearman,
  };
}
