import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cosineSimilarity } from "@attr-rag/core";
import type { EngineContext } from "../src/EngineContext.js";
import { Model } from "../src/Model.js";
import { TEST_MODEL } from "./helpers/models.js";

// No GGUF embedding model is available offline, but llama.cpp pools the hidden states of any model, which
// exercises the same native path (multi-sequence batches, per-sequence pooling).
describe("embeddings", () => {
  let model: Model;
  let ctx: EngineContext;
  beforeAll(async () => {
    model = await Model.load(TEST_MODEL);
    ctx = await model.createContext({ kind: "embed", pooling: "mean", contextSize: 4096, sequences: 8, batchSize: 256 });
  });
  afterAll(async () => {
    await model?.dispose();
  });

  it("embed - one pooled vector per text; batching many texts equals embedding each alone", async () => {
    const texts = ["Lily had a red ball.", "The boat went down the river to the sea.", "Lily had a red ball.", "Mom made soup."];
    const batched = await ctx.embed(texts);
    expect(batched).toHaveLength(4);
    for (const v of batched) expect(v.length).toBe(model.info.nEmbd);
    for (const [i, text] of texts.entries()) {
      const [alone] = await ctx.embed([text]);
      for (let d = 0; d < alone!.length; d++) expect(Math.abs(alone![d]! - batched[i]![d]!)).toBeLessThan(1e-4);
    }
    expect(cosineSimilarity(batched[0]!, batched[2]!)).toBeCloseTo(1, 5);
    expect(cosineSimilarity(batched[0]!, batched[1]!)).toBeLessThan(0.9999);
  });

  it("embed - more texts than sequences are packed into several batches", async () => {
    const texts = Array.from({ length: 20 }, (_, i) => `Story number ${i} about a cat and a dog.`);
    const vectors = await ctx.embed(texts);
    expect(vectors).toHaveLength(20);
    const [again] = await ctx.embed([texts[17]!]);
    expect(cosineSimilarity(again!, vectors[17]!)).toBeCloseTo(1, 5);
  });

  it("embed - inputs longer than a micro-batch fail clearly unless truncated; rerank needs a classifier head", async () => {
    const long = "the cat sat on the mat and ".repeat(80);
    await expect(ctx.embed([long])).rejects.toThrow(/embeds at most 256/);
    const [cut] = await ctx.embed([long], { truncate: true });
    expect(cut!.length).toBe(model.info.nEmbd);
    expect(await ctx.embed([])).toEqual([]);
    await expect(model.createContext({ kind: "rerank" })).rejects.toThrow(/no classification head/);
  });
});
