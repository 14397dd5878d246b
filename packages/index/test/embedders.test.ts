import { shippedModelPath } from "@attr-rag/engine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmbedder } from "../src/embedders/createEmbedder.js";
import { UseLiteEmbedder } from "../src/embedders/UseLiteEmbedder.js";

/** The repository's stories260K.gguf: a real llama whose mean-pooled hidden states serve as embeddings here. */
const STORIES = shippedModelPath();

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

describe("UseLiteEmbedder", () => {
  let embedder: UseLiteEmbedder;
  beforeAll(() => {
    embedder = new UseLiteEmbedder();
  });
  afterAll(async () => {
    await embedder.dispose();
  });

  it("embedders - use-lite gives 512-d unit vectors; related sentences are closer than unrelated ones", async () => {
    const [flask, beaker, market] = await embedder.embed(["Add water to the flask", "Pour water into the beaker", "The stock market fell"]);
    for (const v of [flask!, beaker!, market!]) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(512);
      expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 5);
    }
    expect(dot(flask!, beaker!)).toBeGreaterThan(dot(flask!, market!) + 0.1);
    expect(dot(flask!, beaker!)).toBeGreaterThan(dot(beaker!, market!) + 0.1);
  });

  it("embedders - use-lite is deterministic and batching equals one-by-one", async () => {
    const texts = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} about titration and ${"buffers ".repeat(i % 5)}`);
    const batched = await embedder.embed(texts);
    expect(batched).toHaveLength(40);
    const [first] = await embedder.embed([texts[0]!]);
    const [again] = await embedder.embed([texts[0]!]);
    expect(Array.from(again!)).toEqual(Array.from(first!));
    for (const i of [0, 7, 33, 39]) {
      const [single] = await embedder.embed([texts[i]!]);
      for (let d = 0; d < 512; d++) expect(Math.abs(single![d]! - batched[i]![d]!)).toBeLessThan(1e-5);
    }
    expect(await embedder.embed([])).toEqual([]);
  });

  it("embedders - use-lite runs off the event loop: timers keep firing while it embeds", async () => {
    await embedder.embed(["warm up the model"]);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = Date.now();
    await embedder.embed(Array.from({ length: 64 }, (_, i) => `A longer sentence number ${i} about heating the round-bottom flask under reflux`));
    const elapsed = Date.now() - started;
    clearInterval(timer);
    // A blocked loop would fire at most once or twice; a free one fires about every 5 ms.
    expect(ticks).toBeGreaterThan(Math.min(10, elapsed / 20));
  });

  it("embedders - use-lite dispose terminates the worker, is repeat-safe, and later calls reject", async () => {
    const e = new UseLiteEmbedder();
    const pending = expect(e.embed(["a sentence that is embedding while we dispose"])).rejects.toThrow(/disposed/);
    await e.dispose();
    await pending;
    await e.dispose();
    await expect(e.embed(["x"])).rejects.toThrow(/disposed/);
  });

  it("embedders - use-lite honours an aborted signal", async () => {
    const controller = new AbortController();
    controller.abort(new Error("stop now"));
    await expect(embedder.embed(["x"], controller.signal)).rejects.toThrow(/stop now/);
  });
});

describe("createEmbedder", () => {
  it("embedders - createEmbedder rejects an unknown spec with the valid forms", async () => {
    await expect(createEmbedder("word2vec")).rejects.toThrow(/unknown embedder "word2vec"; use "use-lite" or "gguf:/);
  });

  it("embedders - createEmbedder gguf: a missing model file is a clear error", async () => {
    await expect(createEmbedder("gguf:/nonexistent/model.gguf")).rejects.toThrow(/nonexistent/);
  });

  it("embedders - a GGUF model embeds into nEmbd-d unit vectors with a stable id", async () => {
    const e = await createEmbedder(`gguf:${STORIES}`);
    try {
      expect(e.id).toMatch(/^gguf:stories260K\.gguf@\d+$/);
      const vs = await e.embed(["Once upon a time", "a cat sat", "Once upon a time"]);
      expect(vs).toHaveLength(3);
      for (const v of vs) {
        expect(v.length).toBe(e.dimensions);
        expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 4);
      }
      expect(dot(vs[0]!, vs[2]!)).toBeCloseTo(1, 4);
      const long = await e.embed(["word ".repeat(5000)]);
      expect(long[0]!.length).toBe(e.dimensions);
    } finally {
      await e.dispose();
      await e.dispose();
    }
  });
});
