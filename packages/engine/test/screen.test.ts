import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineContext } from "../src/EngineContext.js";
import { EngineArgumentError } from "../src/errors.js";
import { Model } from "../src/Model.js";
import { chooseRegenerated } from "../src/screen.js";
import { expectNearTiesOnly } from "./helpers/equivalence.js";
import { TEST_MODEL } from "./helpers/models.js";
import { storySegments } from "./helpers/prompts.js";

describe("screen (hierarchical occlusion)", () => {
  let model: Model;
  let ctx: EngineContext;
  beforeAll(async () => {
    model = await Model.load(TEST_MODEL);
    ctx = await model.createContext({ contextSize: 8192, sequences: 8, threads: 1 });
  });
  afterAll(async () => {
    await model?.dispose();
  });

  it("screen - chooses by threshold or top K, ties to the earlier set, in block order", () => {
    expect(chooseRegenerated([0.5, 2, -1, 2, 0.1], { topK: 2 })).toEqual([1, 3]);
    expect(chooseRegenerated([0.5, 2, -1, 2, 0.1], { topK: 3 })).toEqual([0, 1, 3]);
    expect(chooseRegenerated([0.5, 2, -1, 2, 0.1], {})).toEqual([0, 1, 3]);
    expect(chooseRegenerated([0.5, 2, -1, 2, 0.1], { threshold: 0.2 })).toEqual([0, 1, 3]);
    expect(chooseRegenerated([0.5, 2], { topK: 0 })).toEqual([]);
    expect(() => chooseRegenerated([1], { topK: -1 })).toThrow(EngineArgumentError);
    expect(() => chooseRegenerated([1], { threshold: Number.NaN })).toThrow(EngineArgumentError);
  });

  it("screen - regenerates exactly the sets it says (the top drops of an independent forced pass), exactly, and leaves A_full for the rest", async () => {
    const segments = ctx.tokenize(storySegments(6, 61));
    const r = await ctx.screen({ segments, maxTokens: 32, topK: 2 });
    const exact = await ctx.occlude({ segments, strategy: "naive", maxTokens: 32 });
    expect(r.full.tokens).toEqual(exact.full.tokens);
    // The drops, recomputed with the engine's forced pass on its own.
    const forced = await ctx.forced({ segments, strategy: "kv-reuse", full: exact.full.tokens, forced: segments.blocks.map(() => exact.full.tokens) });
    const drops = forced.perSet.map((p) => forced.fullLogProb - p.logProb);
    r.drops.forEach((d, j) => expect(d).toBeCloseTo(drops[j]!, 4));
    const byDrop = drops.map((d, j) => [d, j] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
    expect(r.regenerated).toEqual([byDrop[0]![1], byDrop[1]![1]].sort((a, b) => a - b));
    expect(r.screened).toEqual(segments.blocks.map((_, j) => j).filter((j) => !r.regenerated.includes(j)));
    expect(r.occluded).toHaveLength(6);
    // Regenerated sets are answered exactly; screened ones keep A_full (so α = 0 on every metric).
    expectNearTiesOnly({ ...exact, occluded: r.regenerated.map((j) => exact.occluded[j]!) }, { ...r, occluded: r.regenerated.map((j) => r.occluded[j]!) });
    for (const j of r.screened) expect(r.occluded[j]!.text).toBe(r.full.text);
    // Only the regenerated sets were decoded: fewer tokens than exact occlusion of all six.
    const shared = await ctx.occlude({ segments, strategy: "speculative", maxTokens: 32 });
    expect(r.counters.tokensEvaluated).toBeLessThan(shared.counters.tokensEvaluated + r.screenCounters.tokensEvaluated);
    expect(r.screenCounters.tokensEvaluated).toBeGreaterThan(0);
    expect(ctx.sequencesInUse()).toBe(0);
  });

  it("screen - its drops are leave-one-out drops: with covering windows they equal exact teacher-forced scoring; by default they rank the sets alike", async () => {
    const segments = ctx.tokenize(storySegments(6, 63));
    const n = segments.blocks.length;
    const exactFull = await ctx.occlude({ segments, strategy: "naive", maxTokens: 32 });
    // Exact leave-one-out, by a different code path: scoreContinuations recomputes every prompt position.
    const all = Array.from({ length: n }, (_, j) => j);
    const scored = await ctx.scoreContinuations({ segments, continuation: exactFull.full.tokens, coalitions: [all, ...all.map((j) => all.filter((k) => k !== j))] });
    const exactDrops = all.map((j) => scored.totals[0]! - scored.totals[1 + j]!);
    const covered = await ctx.screen({ segments, maxTokens: 32, topK: 2, tailTokens: 1 << 20 });
    covered.drops.forEach((d, j) => expect(Math.abs(d - exactDrops[j]!), `set ${j}`).toBeLessThan(1e-2));
    // With the default (tail-only) recompute the drops are approximate, but they must still order the sets
    // much as the exact ones do.
    const approx = await ctx.screen({ segments, maxTokens: 32, topK: 2 });
    const rank = (xs: readonly number[]) => xs.map((x) => xs.filter((y) => y > x).length);
    const [ra, re] = [rank(approx.drops), rank(exactDrops)];
    const d2 = ra.reduce((s, r, j) => s + (r - re[j]!) ** 2, 0);
    expect(1 - (6 * d2) / (n * (n * n - 1))).toBeGreaterThan(0.5);
    expect(ctx.sequencesInUse()).toBe(0);
  });

  it("screen - a threshold nobody reaches regenerates nothing; bad options are refused", async () => {
    const segments = storySegments(3, 62);
    const none = await ctx.screen({ segments, maxTokens: 16, threshold: 1e9 });
    expect(none.regenerated).toEqual([]);
    expect(none.occluded.every((o) => o.text === none.full.text)).toBe(true);
    await expect(ctx.screen({ segments, threshold: 1, topK: 1 })).rejects.toThrow(/not both/);
    expect(ctx.sequencesInUse()).toBe(0);
  });
});
