import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineContext } from "../src/EngineContext.js";
import { Model } from "../src/Model.js";
import { TEST_MODEL, tinySynthModel } from "./helpers/models.js";
import { sharedStrategiesAgainstNaive } from "./helpers/equivalence.js";
import { storySegments } from "./helpers/prompts.js";

// The unified cache shares prefix cells instead of copying streams: a different code path in llama.cpp
// (partial seq_cp inside one stream) that must give the same answers.
for (const which of ["stories260K", "synthetic qwen2 tiny"] as const) {
  describe(`occlusion with a unified KV cache on ${which}`, () => {
    let model: Model;
    let ctx: EngineContext;
    beforeAll(async () => {
      model = await Model.load(which === "stories260K" ? TEST_MODEL : await tinySynthModel());
      ctx = await model.createContext({ contextSize: 16384, sequences: 16, threads: 1, kvUnified: true });
    });
    afterAll(async () => {
      await model?.dispose();
    });

    it(`occlusion - unified KV: shared strategies match naive except at near-ties (${which})`, async () => {
      expect(ctx.info.kvUnified).toBe(true);
      expect(ctx.info.sequenceCells).toBe(ctx.info.contextSize);
      let identical = 0;
      let total = 0;
      for (const [n, seed, maxTokens] of [[2, 71, 48], [5, 72, 64], [9, 73, 40]] as const) {
        const r = await sharedStrategiesAgainstNaive(ctx, storySegments(n, seed), maxTokens);
        identical += r.identical;
        total += r.total;
        expect(ctx.sequencesInUse()).toBe(0);
      }
      if (which === "stories260K") expect(identical / total).toBeGreaterThanOrEqual(0.95);
    });
  });
}
