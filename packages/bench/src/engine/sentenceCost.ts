// What sentence-level attribution adds to the occlusion stage (scoreAnswer: A_full teacher-forced after every
// prompt): each exact strategy runs alternately without and with it, `runs` times, on the same prompt.
import type { EngineContext, OcclusionCounters, OcclusionStrategy, TokenSegments } from "@attr-rag/engine";

export interface SentenceCostSide {
  /** Median wall time of the occlusion call (A_full and every occluded answer). */
  wall_ms: number;
  wall_ms_runs: number[];
  tokens_evaluated: number;
  /** llama_decode calls that extend answers. */
  decode_steps: number;
  /** Every llama_decode call: prefill, answer steps and calls that only teacher-force. */
  decode_calls: number;
  /** Rows that only teacher-force A_full (speculative verifies it as a draft instead: not counted here). */
  forced_rows: number;
}

export interface SentenceCost {
  runs: number;
  without: SentenceCostSide;
  with: SentenceCostSide;
  wall_ratio: number;
  tokens_ratio: number;
  decode_steps_ratio: number;
  decode_calls_ratio: number;
  /** Answers identical with and without (scoring must not change them). */
  answers_identical: boolean;
}

const median = (v: readonly number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
const calls = (c: OcclusionCounters) => c.decodeSteps + c.prefillCalls + c.forcedCalls;

export async function measureSentenceCost(ctx: EngineContext, segments: TokenSegments, strategy: OcclusionStrategy, maxTokens: number, runs: number, tick: () => void): Promise<SentenceCost> {
  const walls: Record<"without" | "with", number[]> = { without: [], with: [] };
  const last: Partial<Record<"without" | "with", OcclusionCounters>> = {};
  const answers: Record<"without" | "with", string> = { without: "", with: "" };
  for (let i = 0; i < runs; i++) {
    for (const side of ["without", "with"] as const) {
      const t0 = performance.now();
      const r = await ctx.occlude({ segments, strategy, maxTokens, ...(side === "with" ? { scoreAnswer: true } : {}) });
      walls[side].push(performance.now() - t0);
      last[side] = r.counters;
      answers[side] = JSON.stringify([r.full, ...r.occluded].map((s) => Array.from(s.tokens)));
      tick();
    }
  }
  const side = (s: "without" | "with"): SentenceCostSide => ({
    wall_ms: median(walls[s]),
    wall_ms_runs: walls[s],
    tokens_evaluated: last[s]!.tokensEvaluated,
    decode_steps: last[s]!.decodeSteps,
    decode_calls: calls(last[s]!),
    forced_rows: last[s]!.forcedRows,
  });
  const without = side("without");
  const withIt = side("with");
  return {
    runs,
    without,
    with: withIt,
    wall_ratio: withIt.wall_ms / without.wall_ms,
    tokens_ratio: withIt.tokens_evaluated / without.tokens_evaluated,
    decode_steps_ratio: withIt.decode_steps / without.decode_steps,
    decode_calls_ratio: withIt.decode_calls / without.decode_calls,
    answers_identical: answers.with === answers.without,
  };
}
