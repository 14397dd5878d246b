import {
  SelectionDecision,
  SelectionFlag,
  SelectionReason,
  SelectionStrategy,
  type SelectionExplanation,
  type SetSelection,
} from "@attr-rag/contracts";
import type { SelectionReason as CoreReason, SelectionResult } from "@attr-rag/core";
import { metricToProto, type SelectionMetric } from "./protoNames.js";
import type { SelectionSettings } from "./selectionSettings.js";

const REASONS: Record<CoreReason, SelectionReason> = {
  "top-voted": SelectionReason.SELECTION_REASON_BEST_SET,
  "selected-by-votes": SelectionReason.SELECTION_REASON_ENOUGH_VOTES,
  "fallback-top-reranked": SelectionReason.SELECTION_REASON_FALLBACK_TOP_RERANKED,
  "too-few-votes": SelectionReason.SELECTION_REASON_TOO_FEW_VOTES,
  "context-ignored": SelectionReason.SELECTION_REASON_CONTEXT_IGNORED,
  "over-max-sets": SelectionReason.SELECTION_REASON_MAX_SETS,
  "over-token-budget": SelectionReason.SELECTION_REASON_TOKEN_BUDGET,
  screened: SelectionReason.SELECTION_REASON_SCREENED,
};

/** The core's selection result as the `selection` event: every set's decision, reason and per-metric vote. */
export function selectionToProto(
  result: SelectionResult,
  setIds: readonly string[],
  alphas: Readonly<Record<string, readonly number[]>>,
  params: SelectionSettings,
  minVotesCapped: boolean,
): SelectionExplanation {
  const metrics = result.perMetric.map((v) => v.metric as SelectionMetric);
  const sets: SetSelection[] = result.decisions.map((d) => ({
    setIndex: d.index,
    setId: d.id,
    decision: d.kept ? SelectionDecision.SELECTION_DECISION_KEPT : SelectionDecision.SELECTION_DECISION_DROPPED,
    reason: REASONS[d.reason],
    reasonText: d.explanation,
    votes: d.selectedBy.length,
    argmaxVotes: d.argmaxVotes.length,
    meanAlpha: d.meanAlpha,
    metricVotes: result.perMetric.map((v) => {
      const at = v.order.indexOf(d.index);
      const next = v.order[at + 1];
      const alpha = alphas[v.metric]!;
      return {
        metric: metricToProto(v.metric as SelectionMetric),
        rank: at + 1,
        dropToNext: next === undefined ? 0 : alpha[d.index]! - alpha[next]!,
        voted: v.selected.includes(d.index),
        argmax: v.argmax.includes(d.index),
      };
    }),
  }));
  const flags: SelectionFlag[] = [];
  if (result.contextIgnored) flags.push(SelectionFlag.SELECTION_FLAG_ALL_ALPHA_BELOW_EPSILON);
  if (result.perMetric.every((v) => !v.dropExceedsTau)) flags.push(SelectionFlag.SELECTION_FLAG_NO_DROP_ABOVE_TAU);
  if (minVotesCapped) flags.push(SelectionFlag.SELECTION_FLAG_MIN_VOTES_CAPPED);
  if (result.decisions.some((d) => d.reason === "over-max-sets")) flags.push(SelectionFlag.SELECTION_FLAG_TRUNCATED_BY_MAX_SETS);
  if (result.decisions.some((d) => d.reason === "over-token-budget")) flags.push(SelectionFlag.SELECTION_FLAG_TRUNCATED_BY_TOKEN_BUDGET);
  if (setIds.length === 1) flags.push(SelectionFlag.SELECTION_FLAG_SINGLE_SET);
  const best = result.decisions[result.topVoted]!;
  if (!result.contextIgnored && result.decisions.some((d) => d.index !== best.index && d.argmaxVotes.length === best.argmaxVotes.length)) {
    flags.push(SelectionFlag.SELECTION_FLAG_BEST_SET_TIE_BROKEN);
  }
  const selectedSetIds = [...result.kept].sort((a, b) => a - b).map((i) => setIds[i]!);
  return {
    params: {
      strategy: SelectionStrategy.SELECTION_STRATEGY_ELBOW,
      tau: params.tau,
      minVotes: result.options.minVotes,
      epsilon: params.epsilon,
      ...(params.maxSets !== undefined ? { maxSets: params.maxSets } : {}),
      ...(params.tokenBudget !== undefined ? { tokenBudget: params.tokenBudget } : {}),
      maxGap: params.maxGap,
      metrics: metrics.map(metricToProto),
    },
    bestSetId: best.id,
    sets,
    cuts: result.perMetric.map((v) => ({
      metric: metricToProto(v.metric as SelectionMetric),
      largestDrop: v.largestDrop,
      setsAbove: v.dropAfter,
      aboveTau: v.dropExceedsTau,
      argmaxSetId: setIds[v.argmax[0]!]!,
    })),
    flags,
    selectedSetIds,
    summary: summarize(result, setIds),
  };
}

function summarize(result: SelectionResult, setIds: readonly string[]): string {
  const n = setIds.length;
  if (result.contextIgnored) return `kept 1 of ${n} sets (${setIds[0]}): every α was below ε, so the answer did not depend on the context; kept the top re-ranked set`;
  const best = result.decisions[result.topVoted]!;
  const others = result.kept.slice(1).map((i) => setIds[i]);
  return (
    `kept ${result.kept.length} of ${n} sets: S* = ${best.id} (top α on ${best.argmaxVotes.length}/${result.perMetric.length} metrics)` +
    (others.length > 0 ? `, plus ${others.join(", ")} (selected by ≥ ${result.options.minVotes} metrics)` : "; no other set had enough votes")
  );
}
