import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineContext } from "../src/EngineContext.js";
import { Model } from "../src/Model.js";
import { TEST_MODEL } from "./helpers/models.js";
import { sharedStrategiesAgainstNaive } from "./helpers/equivalence.js";
import { storySegments } from "./helpers/prompts.js";

// With flash attention llama.cpp's CPU kernel tiles the (larger, shared) KV cache differently from a
// one-by-one run, so batched answers may drift — but only where naive's top-2 logits nearly tie.
describe("occlusion with flash attention", () => {
  let model: Model;
  let ctx: EngineContext;
  beforeAll(async () => {
    model = await Model.load(TEST_MODEL);
    ctx = await model.createContext({ contextSize: 32768, sequences: 16, threads: 1, flashAttention: "on" });
  });
  afterAll(async () => {
    await model?.dispose();
  });

  it("occlusion - with flash attention every divergence from naive is at a near-tie (≤ 0.1)", async () => {
    let identical = 0;
    let total = 0;
    for (const [n, seed, maxTokens] of [[3, 21, 64], [6, 22, 96], [9, 23, 48], [12, 24, 80]] as const) {
      const r = await sharedStrategiesAgainstNaive(ctx, storySegments(n, seed), maxTokens);
      identical += r.identical;
      total += r.total;
    }
    expect(identical / total).toBeGreaterThan(0.8);
  });
});
