import { EngineStrategy, type EngineCounters } from "@attr-rag/contracts";
import type { GeneratedSequence, OcclusionCounters } from "@attr-rag/engine";
import { strategyToProto, type JobStrategy } from "./generationOptions.js";

/** A greedy step whose top-1/top-2 logit margin is at most this is a near-tie (SPEC section 4). */
export const NEAR_TIE_MARGIN = 0.1;

export function countNearTies(answers: readonly GeneratedSequence[]): number {
  let n = 0;
  for (const a of answers) for (const m of a.margins) if (m <= NEAR_TIE_MARGIN) n++;
  return n;
}

export function occlusionCounters(c: OcclusionCounters, answers: readonly GeneratedSequence[], strategy: JobStrategy): EngineCounters {
  return {
    promptTokens: c.promptTokens,
    tokensEvaluated: c.tokensEvaluated,
    tokensReused: c.tokensReused,
    draftTokensProposed: c.draftProposed,
    draftTokensAccepted: c.draftAccepted,
    decodeSteps: c.decodeSteps,
    sequences: answers.length,
    nearTies: countNearTies(answers),
    elapsedMs: c.totalMs,
    strategy: strategyToProto(strategy),
  };
}

/** Counters of a single generation (the final answer or a baseline answer). */
export function generationCounters(promptTokens: number, answer: GeneratedSequence, elapsedMs: number): EngineCounters {
  return {
    promptTokens,
    tokensEvaluated: promptTokens + answer.tokens.length,
    tokensReused: 0,
    draftTokensProposed: 0,
    draftTokensAccepted: 0,
    decodeSteps: answer.tokens.length,
    sequences: 1,
    nearTies: countNearTies([answer]),
    elapsedMs,
    strategy: EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED,
  };
}

export function addCounters(a: EngineCounters, b: EngineCounters): EngineCounters {
  return {
    promptTokens: a.promptTokens + b.promptTokens,
    tokensEvaluated: a.tokensEvaluated + b.tokensEvaluated,
    tokensReused: a.tokensReused + b.tokensReused,
    draftTokensProposed: a.draftTokensProposed + b.draftTokensProposed,
    draftTokensAccepted: a.draftTokensAccepted + b.draftTokensAccepted,
    decodeSteps: a.decodeSteps + b.decodeSteps,
    sequences: a.sequences + b.sequences,
    nearTies: a.nearTies + b.nearTies,
    elapsedMs: a.elapsedMs + b.elapsedMs,
    // Runs combined into one report share their occlusion strategy; a plain generation has none.
    strategy: a.strategy !== EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED ? a.strategy : b.strategy,
  };
}
