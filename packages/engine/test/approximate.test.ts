import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineContext } from "../src/EngineContext.js";
import { AbortError, EngineArgumentError, EngineLimitError } from "../src/errors.js";
import { Model } from "../src/Model.js";
import { expectNearTiesOnly } from "./helpers/equivalence.js";
import { exposedGc, settledMemory } from "./helpers/gc.js";
import { OCCLUSION_TEST_MODELS, TEST_MODEL } from "./helpers/models.js";
import { storySegments } from "./helpers/prompts.js";

// More than any prompt here has after its first set: the whole suffix after the gap is recomputed.
const COVER_ALL = 1 << 20;
const CASES = [
  { n: 2, seed: 21, maxTokens: 40 },
  { n: 5, seed: 22, maxTokens: 64 },
  { n: 8, seed: 23, maxTokens: 32 },
];

const MODELS = OCCLUSION_TEST_MODELS;

for (const which of Object.keys(MODELS) as (keyof typeof MODELS)[]) {
  describe(`approximate occlusion on ${which}`, () => {
    let model: Model;
    let streams: EngineContext;
    let unified: EngineContext;
    beforeAll(async () => {
      model = await Model.load(await MODELS[which]());
      // pairExact compares whole next-token distributions: the host path (sampling "host").
      streams = await model.createContext({ contextSize: 8192, sequences: 8, threads: 1, sampling: "host" });
      unified = await model.createContext({ contextSize: 8192, sequences: 8, threads: 1, kvUnified: true });
    });
    afterAll(async () => {
      await model?.dispose();
    });

    it(`approximate - with recompute windows covering the whole suffix, kv-reuse and kv-mask equal naive token for token except at near-ties (${which})`, async () => {
      let identical = 0;
      let total = 0;
      for (const c of CASES) {
        const segments = storySegments(c.n, c.seed);
        const naive = await streams.occlude({ segments, strategy: "naive", maxTokens: c.maxTokens });
        for (const [ctx, strategy, extra] of [
          [streams, "kv-reuse", { tailTokens: COVER_ALL }],
          [streams, "kv-mask", { tailTokens: COVER_ALL }],
          [unified, "kv-mask", { gapTokens: COVER_ALL, tailTokens: 1 }],
        ] as const) {
          const r = await ctx.occlude({ segments, strategy, maxTokens: c.maxTokens, ...extra });
          expect(r.strategy).toBe(strategy);
          const cmp = expectNearTiesOnly(naive, r);
          identical += cmp.identical;
          total += cmp.total;
          expect(ctx.sequencesInUse()).toBe(0);
        }
      }
      expect(total).toBe(3 * CASES.reduce((s, c) => s + c.n + 1, 0));
      if (which !== "synthetic qwen2 tiny") expect(identical / total).toBeGreaterThanOrEqual(0.95);
    });

    it(`approximate - by default kv-reuse recomputes only the tail: A_full stays exact, and it evaluates fewer tokens than prefix-shared (${which})`, async () => {
      const segments = storySegments(8, 31);
      const exact = await streams.occlude({ segments, strategy: "prefix-shared", maxTokens: 48 });
      const approx = await streams.occlude({ segments, strategy: "kv-reuse", maxTokens: 48 });
      expect(approx.full.tokens).toEqual(exact.full.tokens);
      expect(approx.counters.tokensReused).toBeGreaterThan(exact.counters.tokensReused);
      expect(approx.counters.tokensEvaluated).toBeLessThan(exact.counters.tokensEvaluated);
      const mask = await unified.occlude({ segments, strategy: "kv-mask", gapTokens: 4, maxTokens: 48 });
      expect(mask.full.tokens).toEqual(exact.full.tokens);
      expect(mask.counters.tokensReused).toBeGreaterThan(exact.counters.tokensReused);
    });

    it(`approximate - forced pairs: covering windows give zero KL and full top-1 agreement, and the exact half matches teacher-forced scoring (${which})`, async () => {
      const segments = storySegments(5, 41);
      const exact = await streams.occlude({ segments, strategy: "prefix-shared", maxTokens: 24 });
      const forced = exact.occluded.map((o) => o.tokens);
      const covered = await streams.forced({ segments, strategy: "kv-reuse", tailTokens: COVER_ALL, full: exact.full.tokens, forced, pairExact: true });
      const approx = await streams.forced({ segments, strategy: "kv-reuse", full: exact.full.tokens, forced, pairExact: true });
      const scored = await streams.scoreContinuations({
        segments,
        continuation: exact.full.tokens,
        coalitions: [segments.blocks.map((_, i) => i)],
      });
      expect(covered.fullLogProb).toBeCloseTo(scored.totals[0]!, 3);
      for (const [k, s] of covered.perSet.entries()) {
        expect(s.steps).toBe(forced[k]!.length);
        expect(s.top1Agree).toBe(s.steps);
        expect(s.kl).toBeLessThan(1e-4 * Math.max(1, s.steps));
        expect(s.logProb).toBeCloseTo(s.exactLogProb, 2);
      }
      for (const [k, s] of approx.perSet.entries()) {
        const leaveOut = segments.blocks.map((_, i) => i).filter((i) => i !== k);
        const exactScore = await streams.scoreContinuations({ segments, continuation: forced[k]!, coalitions: [leaveOut] });
        if (forced[k]!.length > 0) expect(s.exactLogProb).toBeCloseTo(exactScore.totals[0]!, 2);
        expect(s.top1Agree).toBeLessThanOrEqual(s.steps);
      }
      // Every set but the last reuses cells, so somewhere the approximation must show.
      expect(approx.perSet.slice(0, -1).some((s) => s.kl > 1e-6)).toBe(true);
      expect(streams.sequencesInUse()).toBe(0);
    });
  });
}

describe("approximate occlusion: limits and bookkeeping", () => {
  let model: Model;
  let streams: EngineContext;
  let unified: EngineContext;
  beforeAll(async () => {
    model = await Model.load(TEST_MODEL);
    streams = await model.createContext({ contextSize: 8192, sequences: 8, threads: 1, sampling: "host" });
    unified = await model.createContext({ contextSize: 4096, sequences: 8, threads: 1, kvUnified: true });
  });
  afterAll(async () => {
    await model?.dispose();
  });

  it("approximate - layouts llama.cpp cannot serve are refused before any work, naming the fix", async () => {
    const segments = storySegments(3, 51);
    await expect(unified.occlude({ segments, strategy: "kv-reuse" })).rejects.toThrow(EngineLimitError);
    await expect(unified.occlude({ segments, strategy: "kv-reuse" })).rejects.toThrow(/kvUnified: false.*or kv-mask/);
    await expect(streams.occlude({ segments, strategy: "kv-mask", gapTokens: 8 })).rejects.toThrow(/needs a unified KV cache/);
    await expect(streams.occlude({ segments, strategy: "kv-reuse", tailTokens: 0 })).rejects.toThrow(EngineArgumentError);
    await expect(streams.occlude({ segments, strategy: "kv-reuse", gapTokens: -1 })).rejects.toThrow(/gapTokens must be an integer/);
    await expect(streams.forced({ segments, strategy: "prefix-shared" as "kv-reuse", full: new Int32Array([1]), forced: [] })).rejects.toThrow(/approximate strategy/);
    await expect(streams.forced({ segments, strategy: "kv-reuse", full: new Int32Array([1]), forced: [new Int32Array([1])] })).rejects.toThrow(/1 token lists for 3/);
    expect(streams.sequencesInUse()).toBe(0);
    // Still usable after the refusals.
    expect((await streams.occlude({ segments, strategy: "kv-reuse", maxTokens: 4 })).occluded).toHaveLength(3);
  });

  it("approximate - a cancelled kv-reuse job rejects with AbortError and leaves no sequence behind", async () => {
    const controller = new AbortController();
    const run = streams.occlude({
      segments: storySegments(6, 52),
      strategy: "kv-reuse",
      maxTokens: 400,
      signal: controller.signal,
      onFullToken: () => controller.abort(),
    });
    await expect(run).rejects.toThrow(AbortError);
    expect(streams.sequencesInUse()).toBe(0);
  });

  it("approximate - 200 kv-reuse, kv-mask and forced jobs leave memory and the KV cache flat", async () => {
    const gc = exposedGc();
    const segments = streams.tokenize(storySegments(4, 53));
    // Short answers: what could leak is per job (batch, sequences, result), not per token.
    const full = (await streams.occlude({ segments, strategy: "prefix-shared", maxTokens: 4 })).full.tokens;
    const jobs = [
      () => streams.occlude({ segments, strategy: "kv-reuse", maxTokens: 4 }),
      () => unified.occlude({ segments, strategy: "kv-mask", gapTokens: 6, maxTokens: 4 }),
      () => streams.forced({ segments, strategy: "kv-reuse", full, forced: segments.blocks.map(() => full), pairExact: true }),
    ];
    for (let i = 0; i < 21; i++) await jobs[i % 3]!();
    const start = settledMemory(gc);
    for (let i = 0; i < 200; i++) {
      await jobs[i % 3]!();
      expect(streams.sequencesInUse()).toBe(0);
      expect(unified.sequencesInUse()).toBe(0);
    }
    const end = settledMemory(gc);
    // The same bounds as the exact strategies' 200-job test (robustness.test.ts).
    expect(end.rss - start.rss).toBeLessThan(2 * 1024 * 1024);
    expect(end.heapUsed - start.heapUsed).toBeLessThan(256 * 1024);
  });
});
