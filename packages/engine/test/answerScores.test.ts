import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineContext } from "../src/EngineContext.js";
import { Model } from "../src/Model.js";
import type { OcclusionStrategy } from "../src/occlude.js";
import type { TokenSegments } from "../src/tokenSegments.js";
import { TEST_MODEL } from "./helpers/models.js";
import { storySegments } from "./helpers/prompts.js";

// scoreAnswer: log P(A_full[i] | prompt) under every occluded prompt, the full one and the one without sets,
// computed inside the occlusion job. The reference is an independent code path: the scoring engine, one
// prompt per call.
async function alone(ctx: EngineContext, s: TokenSegments, keep: readonly number[], answer: Int32Array): Promise<Float32Array> {
  const segments: TokenSegments = { prefix: s.prefix, blocks: keep.map((j) => s.blocks[j]!), suffix: s.suffix };
  return (await ctx.scoreContinuations({ segments, continuation: answer, coalitions: [keep.map((_, i) => i)] })).logProbs[0]!;
}

/**
 * The largest difference of any contiguous span's sum (a sentence is one): twice the largest difference of
 * the running sums bounds it, so that is what is returned; every single token is such a span too.
 */
function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  let running = 0;
  for (let i = 0; i < a.length; i++) {
    running += a[i]! - b[i]!;
    m = Math.max(m, Math.abs(a[i]! - b[i]!), 2 * Math.abs(running));
  }
  return m;
}

describe("A_full scored inside the occlusion job (stories260K)", () => {
  let model: Model;
  const contexts: Record<string, EngineContext> = {};
  beforeAll(async () => {
    model = await Model.load(TEST_MODEL);
    contexts["per-sequence"] = await model.createContext({ contextSize: 8192, sequences: 6, threads: 1, kvType: "f32" });
    contexts["unified"] = await model.createContext({ contextSize: 8192, sequences: 6, threads: 1, kvType: "f32", kvUnified: true });
  });
  afterAll(async () => {
    await model?.dispose();
  });

  for (const layout of ["per-sequence", "unified"]) {
    for (const strategy of ["naive", "prefix-shared", "speculative"] as OcclusionStrategy[]) {
      it(`scores equal one prompt per call (${strategy}, ${layout} KV)`, async () => {
        const ctx = contexts[layout]!;
        const s = ctx.tokenize(storySegments(4, 71));
        const r = await ctx.occlude({ segments: s, maxTokens: 24, strategy, scoreAnswer: true, maxParallel: 2 });
        const a = r.full.tokens;
        const scores = r.answerScores!;
        const all = s.blocks.map((_, i) => i);
        const diffs = [maxDiff(scores.full, await alone(ctx, s, all, a)), maxDiff(scores.empty, await alone(ctx, s, [], a))];
        for (const [k, j] of r.occludedBlocks.entries()) diffs.push(maxDiff(scores.occluded[k]!, await alone(ctx, s, all.filter((i) => i !== j), a)));
        for (const d of diffs) expect(d).toBeLessThan(1e-4);
        // Scoring changes no answer: the same tokens as the job without it.
        const plain = await ctx.occlude({ segments: s, maxTokens: 24, strategy, maxParallel: 2 });
        expect(Array.from(a)).toEqual(Array.from(plain.full.tokens));
        r.occluded.forEach((o, k) => expect(Array.from(o.tokens)).toEqual(Array.from(plain.occluded[k]!.tokens)));
        expect(plain.answerScores).toBeUndefined();
        // Speculative verifies A_full as each occluded sequence's first draft: only the prompt without sets
        // adds forced rows; the others force A_full after each answer.
        expect(r.counters.forcedRows).toBe(strategy === "speculative" ? a.length : a.length * (r.occluded.length + 1));
      });

      it(`a given A_full is scored the same way (${strategy}, ${layout} KV)`, async () => {
        const ctx = contexts[layout]!;
        const s = ctx.tokenize(storySegments(3, 72));
        // Not the model's own answer: a sentence of one set, as an Attribute call would bring.
        const given = model.tokenize(" Tom found a big box under the old tree in the park.", { addSpecial: false, parseSpecial: false });
        const r = await ctx.occlude({ segments: s, maxTokens: given.length, strategy, scoreAnswer: true, givenFull: { tokens: given, endedWithEog: true } });
        const scores = r.answerScores!;
        const all = s.blocks.map((_, i) => i);
        expect(maxDiff(scores.full, await alone(ctx, s, all, given))).toBeLessThan(1e-4);
        expect(maxDiff(scores.empty, await alone(ctx, s, [], given))).toBeLessThan(1e-4);
        for (const [k, j] of r.occludedBlocks.entries()) expect(maxDiff(scores.occluded[k]!, await alone(ctx, s, all.filter((i) => i !== j), given))).toBeLessThan(1e-4);
      });
    }
  }

  it("scoring A_full is refused on approximate strategies and prompts without a suffix, before llama.cpp sees them", async () => {
    const ctx = contexts["unified"]!;
    const s = ctx.tokenize(storySegments(2, 73));
    await expect(ctx.occlude({ segments: s, maxTokens: 4, strategy: "kv-mask", scoreAnswer: true })).rejects.toThrow(/exact strategy/);
    await expect(ctx.occlude({ segments: { ...s, suffix: new Int32Array(0) }, maxTokens: 4, scoreAnswer: true })).rejects.toThrow(/suffix/);
    const given = { tokens: ctx.model.tokenize(" Lily had a red ball.", { addSpecial: false, parseSpecial: false }), endedWithEog: true };
    await expect(ctx.occlude({ segments: s, maxTokens: 2, scoreAnswer: true, givenFull: given })).rejects.toThrow(/maxTokens ≥ its length/);
  });
});
