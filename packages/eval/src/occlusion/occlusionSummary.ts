// Per approximate strategy, over the questions: how often the selection is the one exact occlusion makes,
// how α ranks agree, and what it cost against the exact reference.
import { occlusionAgreement, type OcclusionAgreement } from "@attr-rag/core";
import type { OcclusionOutcome } from "./occlusionOutcome.js";

export interface QuestionComparison {
  readonly question_id: string;
  readonly strategy: string;
  readonly agreement: OcclusionAgreement;
  readonly tokens_evaluated: number;
  readonly reference_tokens_evaluated: number;
  readonly occlusion_ms: number;
  readonly reference_occlusion_ms: number;
  readonly sets: number;
  readonly screened_sets: number;
}

export interface StrategySummary {
  readonly strategy: string;
  readonly questions: number;
  /** Fraction of questions with the same kept sets as exact. */
  readonly selection_agreement: number;
  readonly mean_kept_jaccard: number;
  /** Mean Spearman ρ of mean α per set, over questions where it is defined (null if none). */
  readonly mean_alpha_spearman: number | null;
  readonly mean_abs_delta_alpha: Record<string, number>;
  /** Σ tokens evaluated and Σ occlusion time, and their ratios to the exact reference's. */
  readonly tokens_evaluated: number;
  readonly work_ratio: number;
  readonly occlusion_ms: number;
  readonly time_ratio: number;
  /** Fraction of all sets the screen strategy did not regenerate (0 for the other strategies). */
  readonly screened_fraction: number;
}

export function compareWithExact(questionId: string, strategy: string, exact: OcclusionOutcome, approx: OcclusionOutcome): QuestionComparison {
  if (exact.setIds.join("\u0000") !== approx.setIds.join("\u0000")) {
    throw new Error(
      `question ${questionId}: ${strategy} attributed ${approx.setIds.length} sets, the exact run ${exact.setIds.length}, not the same ones: ` +
        "sets were dropped to fit one sequence's KV cells (the strategies reserve different room; raise --context-size or lower --sequences), or retrieval is not deterministic here",
    );
  }
  return {
    question_id: questionId,
    strategy,
    agreement: occlusionAgreement(exact, approx),
    tokens_evaluated: approx.tokensEvaluated,
    reference_tokens_evaluated: exact.tokensEvaluated,
    occlusion_ms: approx.occlusionMs,
    reference_occlusion_ms: exact.occlusionMs,
    sets: approx.setIds.length,
    screened_sets: approx.screened,
  };
}

const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);

export function summarizeStrategy(strategy: string, rows: readonly QuestionComparison[]): StrategySummary {
  const mine = rows.filter((r) => r.strategy === strategy);
  const rhos = mine.map((r) => r.agreement.spearman).filter((x): x is number => x !== null);
  const metrics = [...new Set(mine.flatMap((r) => Object.keys(r.agreement.meanAbsDeltaAlpha)))];
  const sum = (f: (r: QuestionComparison) => number) => mine.reduce((s, r) => s + f(r), 0);
  const refTokens = sum((r) => r.reference_tokens_evaluated);
  const refMs = sum((r) => r.reference_occlusion_ms);
  return {
    strategy,
    questions: mine.length,
    selection_agreement: mean(mine.map((r) => (r.agreement.selectionIdentical ? 1 : 0))),
    mean_kept_jaccard: mean(mine.map((r) => r.agreement.keptJaccard)),
    mean_alpha_spearman: rhos.length === 0 ? null : mean(rhos),
    mean_abs_delta_alpha: Object.fromEntries(metrics.map((m) => [m, mean(mine.map((r) => r.agreement.meanAbsDeltaAlpha[m] ?? 0))])),
    tokens_evaluated: sum((r) => r.tokens_evaluated),
    work_ratio: refTokens === 0 ? 0 : sum((r) => r.tokens_evaluated) / refTokens,
    occlusion_ms: sum((r) => r.occlusion_ms),
    time_ratio: refMs === 0 ? 0 : sum((r) => r.occlusion_ms) / refMs,
    screened_fraction: sum((r) => r.sets) === 0 ? 0 : sum((r) => r.screened_sets) / sum((r) => r.sets),
  };
}
