import { SelectionStrategy, type SelectionParams } from "@attr-rag/contracts";
import { metricFromProto, metricToProto, type SelectionMetric } from "./protoNames.js";

/** Selection parameters with every default applied (what the gateway resolved from the request and config). */
export interface SelectionSettings {
  metrics: SelectionMetric[];
  tau: number;
  minVotes: number;
  epsilon: number;
  maxSets?: number;
  tokenBudget?: number;
  maxGap: number;
}

/** As sent to the selector: every value explicit, so the selector never applies defaults of its own. */
export function settingsToProto(s: SelectionSettings): SelectionParams {
  return {
    strategy: SelectionStrategy.SELECTION_STRATEGY_ELBOW,
    tau: s.tau,
    minVotes: s.minVotes,
    epsilon: s.epsilon,
    ...(s.maxSets !== undefined ? { maxSets: s.maxSets } : {}),
    ...(s.tokenBudget !== undefined ? { tokenBudget: s.tokenBudget } : {}),
    maxGap: s.maxGap,
    metrics: s.metrics.map(metricToProto),
  };
}

/** Back from the wire; the gateway validated the values, so missing ones are a malformed request. */
export function settingsFromProto(p: SelectionParams | undefined): SelectionSettings | string {
  if (p === undefined) return "params is missing";
  if (p.tau === undefined || p.minVotes === undefined || p.epsilon === undefined || p.maxGap === undefined) return "params must set tau, min_votes, epsilon and max_gap";
  if (p.metrics.length === 0) return "params.metrics is empty";
  return {
    metrics: [...new Set(p.metrics.map(metricFromProto))],
    tau: p.tau,
    minVotes: p.minVotes,
    epsilon: p.epsilon,
    maxGap: p.maxGap,
    ...(p.maxSets !== undefined ? { maxSets: p.maxSets } : {}),
    ...(p.tokenBudget !== undefined ? { tokenBudget: p.tokenBudget } : {}),
  };
}
