import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineContext } from "../src/EngineContext.js";
import { Model } from "../src/Model.js";
import type { TokenSegments } from "../src/tokenSegments.js";
import { TEST_MODEL, tinySynthModel } from "./helpers/models.js";
import { storySegments } from "./helpers/prompts.js";

/** All subsets of {0..n-1} with the given sizes. */
function subsets(n: number): number[][] {
  const out: number[][] = [];
  for (let mask = 0; mask < 1 << n; mask++) out.push([...Array(n).keys()].filter((i) => mask & (1 << i)));
  return out;
}

for (const which of ["stories260K", "synthetic qwen2 tiny"] as const) {
  describe(`teacher-forced scoring on ${which}`, () => {
    let model: Model;
    let ctx: EngineContext;
    beforeAll(async () => {
      model = await Model.load(which === "stories260K" ? TEST_MODEL : await tinySynthModel());
      // An f32 KV cache keeps batched and one-by-one scores within 1e-3 (f16 rounding of K/V moves them ~5e-3).
      ctx = await model.createContext({ contextSize: 32768, sequences: 16, threads: 2, kvType: "f32" });
    });
    afterAll(async () => {
      await model?.dispose();
    });

    it(`scoring - batched coalition log-likelihoods equal scoring each coalition's prompt alone within 1e-3 (${which})`, async () => {
      const segments = ctx.tokenize(storySegments(4, 61));
      const answer = (await ctx.occlude({ segments, maxTokens: 24, occlude: [0] })).full.tokens;
      const coalitions = subsets(4);
      const batched = await ctx.scoreContinuations({ segments, continuation: answer, coalitions });
      expect(batched.totals).toHaveLength(16);
      expect(batched.counters.tokensReused).toBeGreaterThan(0);
      for (const [k, coalition] of coalitions.entries()) {
        const alone: TokenSegments = { prefix: segments.prefix, blocks: coalition.map((j) => segments.blocks[j]!), suffix: segments.suffix };
        const single = await ctx.scoreContinuations({ segments: alone, continuation: answer, coalitions: [coalition.map((_, i) => i)] });
        expect(Math.abs(single.totals[0]! - batched.totals[k]!)).toBeLessThan(1e-3);
        expect(batched.logProbs[k]).toHaveLength(answer.length);
      }
      expect(batched.logProbs.every((lp) => lp.every((x) => x <= 0))).toBe(true);
    });

    it(`scoring - rejects empty continuations, bad coalitions and missing instruction tokens (${which})`, async () => {
      const segments = ctx.tokenize(storySegments(2, 62));
      await expect(ctx.scoreContinuations({ segments, continuation: new Int32Array(0), coalitions: [[0]] })).rejects.toThrow(/continuation to score is empty/);
      await expect(ctx.scoreContinuations({ segments, continuation: Int32Array.of(5), coalitions: [[0, 2]] })).rejects.toThrow(/coalition 0/);
      await expect(ctx.scoreContinuations({ segments, continuation: Int32Array.of(5), coalitions: [] })).rejects.toThrow(/at least one coalition/);
      await expect(
        ctx.scoreContinuations({ segments: { ...segments, suffix: new Int32Array(0) }, continuation: Int32Array.of(5), coalitions: [[0]] }),
      ).rejects.toThrow(/non-empty suffix/);
    });
  });
}
