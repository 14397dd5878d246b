// Device picks against the host path (ContextOptions.sampling): the greedy token, its margin and every
// log-probability a job reads come from the decode graph (24 bytes a row) instead of a scan of the whole
// logits row on the host. Both paths run the same jobs on the same model; the device path must give the same
// tokens, margins within 1e-5 relative and log-probabilities within 1e-4, for every exact strategy, scoring
// and teacher-forced passes, on stories260K and on the synthetic qwen2 (the bench model's 151,936-token
// vocabulary).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineContext } from "../src/EngineContext.js";
import { EngineArgumentError } from "../src/errors.js";
import { Model } from "../src/Model.js";
import type { OcclusionResult, OcclusionStrategy } from "../src/occlude.js";
import { TEST_MODEL, tinySynthModel } from "./helpers/models.js";
import { storySegments } from "./helpers/prompts.js";

const MODELS = { stories260K: async () => TEST_MODEL, "synthetic qwen2 tiny": () => tinySynthModel("qwen2") };

function sequences(r: OcclusionResult) {
  return [r.full, ...r.occluded];
}

function expectClose(a: ArrayLike<number>, b: ArrayLike<number>, tolerance: number): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  expect(worst).toBeLessThanOrEqual(tolerance);
  return worst;
}

for (const [which, path] of Object.entries(MODELS)) {
  describe(`device picks against the host path (${which})`, () => {
    let model: Model;
    let host: EngineContext;
    let device: EngineContext;
    beforeAll(async () => {
      model = await Model.load(await path());
      host = await model.createContext({ contextSize: 8192, sequences: 6, threads: 1, kvType: "f32", sampling: "host" });
      device = await model.createContext({ contextSize: 8192, sequences: 6, threads: 1, kvType: "f32" });
    });
    afterAll(async () => {
      await model?.dispose();
    });

    it("device picks - the default path is the device's; the host path copies whole rows, the device 24 bytes a row", async () => {
      expect(device.info.sampling).toBe("device");
      expect(device.info.samplingWhy).toBe("");
      expect(host.info.sampling).toBe("host");
      const s = host.tokenize(storySegments(2, 50));
      const vocab = model.info.nVocab;
      for (const [ctx, perRow] of [
        [host, 4 * vocab],
        [device, 24],
      ] as const) {
        const before = ctx.schedulerStats();
        await ctx.occlude({ segments: s, maxTokens: 6, strategy: "prefix-shared" });
        const after = ctx.schedulerStats();
        const rows = after.outputRows - before.outputRows;
        expect(rows).toBeGreaterThan(0);
        expect((after.bytesToHost - before.bytesToHost) / rows).toBe(perRow);
      }
    });

    for (const strategy of ["naive", "prefix-shared", "speculative"] as OcclusionStrategy[]) {
      it(`device picks - ${strategy}: the same tokens, margins within 1e-5 relative, answer scores within 1e-4`, async () => {
        const s = host.tokenize(storySegments(4, 51));
        const a = await host.occlude({ segments: s, maxTokens: 16, strategy, scoreAnswer: true, maxParallel: 3 });
        const b = await device.occlude({ segments: s, maxTokens: 16, strategy, scoreAnswer: true, maxParallel: 3 });
        sequences(a).forEach((x, i) => {
          const y = sequences(b)[i]!;
          expect(Array.from(y.tokens)).toEqual(Array.from(x.tokens));
          x.margins.forEach((m, k) => expect(Math.abs(y.margins[k]! - m)).toBeLessThanOrEqual(1e-5 * Math.max(Math.abs(m), 1e-3)));
        });
        const sa = a.answerScores!;
        const sb = b.answerScores!;
        expectClose(sb.full, sa.full, 1e-4);
        expectClose(sb.empty, sa.empty, 1e-4);
        sa.occluded.forEach((o, k) => expectClose(sb.occluded[k]!, o, 1e-4));
      });
    }

    it("device picks - coalition scores and teacher-forced passes within 1e-4", async () => {
      const s = host.tokenize(storySegments(3, 52));
      const continuation = model.tokenize(" Then the dog ran home.", { addSpecial: false, parseSpecial: false });
      const coalitions = [[0, 1, 2], [0, 2], [1], []];
      const a = await host.scoreContinuations({ segments: s, continuation, coalitions });
      const b = await device.scoreContinuations({ segments: s, continuation, coalitions });
      a.logProbs.forEach((lp, k) => expectClose(b.logProbs[k]!, lp, 1e-4));
      const full = await host.occlude({ segments: s, maxTokens: 8, strategy: "prefix-shared" });
      const forced = { segments: s, strategy: "kv-reuse" as const, full: full.full.tokens, forced: full.occluded.map((o) => o.tokens) };
      const fa = await host.forced(forced);
      const fb = await device.forced(forced);
      expect(Math.abs(fb.fullLogProb - fa.fullLogProb)).toBeLessThanOrEqual(1e-4 * Math.max(1, full.full.tokens.length));
      fa.perSet.forEach((p, k) => {
        expect(fb.perSet[k]!.steps).toBe(p.steps);
        expect(Math.abs(fb.perSet[k]!.logProb - p.logProb)).toBeLessThanOrEqual(1e-4 * Math.max(1, p.steps));
      });
    });

    it("device picks - whole distributions (pairExact) are refused on the device path and named on the host one", async () => {
      const s = host.tokenize(storySegments(2, 53));
      const full = await host.occlude({ segments: s, maxTokens: 6, strategy: "prefix-shared" });
      const forced = { segments: s, strategy: "kv-reuse" as const, full: full.full.tokens, forced: full.occluded.map((o) => o.tokens), pairExact: true };
      await expect(device.forced(forced)).rejects.toThrow(/sampling: 'host'/);
      const r = await host.forced(forced);
      expect(r.perSet.every((p) => p.kl >= 0 && p.steps > 0)).toBe(true);
    });
  });
}

describe("device picks - options", () => {
  it("an unknown sampling path is refused before llama.cpp sees it", async () => {
    const model = await Model.load(TEST_MODEL);
    try {
      await expect(model.createContext({ contextSize: 1024, sequences: 2, sampling: "gpu" as never })).rejects.toThrow(EngineArgumentError);
      const embed = await model.createContext({ kind: "embed", contextSize: 1024, sequences: 2, sampling: "device" });
      expect(embed.info.sampling).toBe("host");
    } finally {
      await model.dispose();
    }
  });
});
