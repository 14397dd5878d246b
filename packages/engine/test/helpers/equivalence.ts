import { expect } from "vitest";
import type { PromptSegments } from "@attr-rag/core";
import { compareSequences, type Comparison } from "../../src/divergence.js";
import type { EngineContext } from "../../src/EngineContext.js";
import type { OcclusionResult } from "../../src/occlude.js";

/** The near-tie bound: a batched answer may first differ from naive's only where naive's margin is ≤ this. */
export const NEAR_TIE = 0.1;

const sequences = (r: OcclusionResult) => [r.full, ...r.occluded];

/** Compares a run with naive's: every divergence must be at a near-tie of naive's. */
export function expectNearTiesOnly(naive: OcclusionResult, other: OcclusionResult): Comparison {
  const cmp = compareSequences(sequences(naive), sequences(other));
  for (const d of cmp.divergences) expect(d.referenceMargin, `seq ${d.seq} step ${d.step}`).toBeLessThanOrEqual(NEAR_TIE);
  return cmp;
}

/** Runs naive and the shared strategies on one prompt; returns how many answers were token-identical. */
export async function sharedStrategiesAgainstNaive(ctx: EngineContext, segments: PromptSegments, maxTokens: number) {
  const naive = await ctx.occlude({ segments, strategy: "naive", maxTokens });
  let identical = 0;
  let total = 0;
  for (const strategy of ["prefix-shared", "speculative"] as const) {
    const cmp = expectNearTiesOnly(naive, await ctx.occlude({ segments, strategy, maxTokens }));
    identical += cmp.identical;
    total += cmp.total;
  }
  return { identical, total };
}
