import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readGgufHeader } from "../src/gguf/readHeader.js";
import { readTensorValues } from "../src/gguf/readTensor.js";
import type { GgufHeader, GgufTensorInfo } from "../src/gguf/types.js";
import { ensureSynthModel, synthModelFileName } from "../src/synth/ensureSynthModel.js";
import { Prng } from "../src/synth/prng.js";
import { synthesizeModel, type SynthesizedModel } from "../src/synth/synthesizeModel.js";
import { resolveVocabDir } from "../src/synth/vocab.js";
import { Model } from "../src/Model.js";

// The vocab GGUFs come with every build of @attr-rag/native; without them these tests fail rather than skip.
const VOCAB_DIR = join(import.meta.dirname, "../../../native/.cache/llama.cpp/models");
const dir = mkdtempSync(join(tmpdir(), "synth-model-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const u32 = (h: GgufHeader, key: string) => h.metadata.get(key);

/** The tensors llama.cpp's loader creates for one block, with ggml shapes, for the tiny preset. */
function tinyBlock(i: number, biases: boolean, matrixType: string): [string, number[], string][] {
  const b = `blk.${i}`;
  return [
    [`${b}.attn_norm.weight`, [64], "F32"],
    [`${b}.attn_q.weight`, [64, 64], matrixType],
    ...(biases ? [[`${b}.attn_q.bias`, [64], "F32"] as [string, number[], string]] : []),
    [`${b}.attn_k.weight`, [64, 32], matrixType], // 2 KV heads of 16
    ...(biases ? [[`${b}.attn_k.bias`, [32], "F32"] as [string, number[], string]] : []),
    [`${b}.attn_v.weight`, [64, 32], matrixType],
    ...(biases ? [[`${b}.attn_v.bias`, [32], "F32"] as [string, number[], string]] : []),
    [`${b}.attn_output.weight`, [64, 64], matrixType],
    [`${b}.ffn_norm.weight`, [64], "F32"],
    [`${b}.ffn_gate.weight`, [64, 128], matrixType],
    [`${b}.ffn_up.weight`, [64, 128], matrixType],
    [`${b}.ffn_down.weight`, [128, 64], matrixType],
  ];
}

const shapes = (h: GgufHeader) => h.tensors.map((t) => [t.name, t.shape, t.type]);
const paramCount = (h: GgufHeader) => h.tensors.reduce((n, t) => n + t.elementCount, 0);
const tensor = (h: GgufHeader, name: string): GgufTensorInfo => h.tensors.find((t) => t.name === name)!;

function stats(values: Float32Array): { mean: number; std: number } {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return { mean, std: Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length) };
}

describe("synthetic models", () => {
  let qwen: SynthesizedModel;
  let qwenHeader: GgufHeader;
  let llama: SynthesizedModel;
  let llamaHeader: GgufHeader;

  beforeAll(async () => {
    qwen = await synthesizeModel({ preset: "tiny", arch: "qwen2", quant: "f16", out: join(dir, "qwen2-tiny-f16.gguf") });
    qwenHeader = await readGgufHeader(qwen.path);
    llama = await synthesizeModel({ preset: "tiny", arch: "llama", quant: "q8_0", out: join(dir, "llama-tiny-q8_0.gguf") });
    llamaHeader = await readGgufHeader(llama.path);
  });

  it("synth qwen2 - has exactly llama.cpp's qwen2 tensors with ggml shapes, biases, tied embeddings and no output.weight", () => {
    expect(shapes(qwenHeader)).toEqual([
      ["token_embd.weight", [64, 151936], "F16"],
      ...tinyBlock(0, true, "F16"),
      ...tinyBlock(1, true, "F16"),
      ["output_norm.weight", [64], "F32"],
    ]);
    expect(qwen.parameterCount).toBe(9_798_208);
    expect(paramCount(qwenHeader)).toBe(qwen.parameterCount);
    expect(qwen.fileSize).toBe(qwenHeader.fileSize);
  });

  it("synth qwen2 - writes the qwen2 hyperparameters with the GGUF types llama.cpp requires", () => {
    const expected: [string, unknown][] = [
      ["general.architecture", { type: "string", value: "qwen2" }],
      ["general.name", { type: "string", value: "attr-rag synthetic qwen2 tiny" }],
      ["general.file_type", { type: "uint32", value: 1 }],
      ["general.alignment", { type: "uint32", value: 32 }],
      ["qwen2.context_length", { type: "uint32", value: 2048 }],
      ["qwen2.embedding_length", { type: "uint32", value: 64 }],
      ["qwen2.block_count", { type: "uint32", value: 2 }],
      ["qwen2.feed_forward_length", { type: "uint32", value: 128 }],
      ["qwen2.attention.head_count", { type: "uint32", value: 4 }],
      ["qwen2.attention.head_count_kv", { type: "uint32", value: 2 }],
      ["qwen2.rope.freq_base", { type: "float32", value: 1_000_000 }],
      ["qwen2.attention.layer_norm_rms_epsilon", { type: "float32", value: Math.fround(1e-6) }],
    ];
    for (const [key, value] of expected) expect(u32(qwenHeader, key), key).toEqual(value);
  });

  it("synth qwen2 - copies every tokenizer.* key of the vocab GGUF unchanged, in order, with its type", async () => {
    const vocab = await readGgufHeader(join(VOCAB_DIR, "ggml-vocab-qwen2.gguf"));
    const tokenizerKeys = (h: GgufHeader) => [...h.metadata].filter(([k]) => k.startsWith("tokenizer."));
    const copied = tokenizerKeys(qwenHeader);
    expect(copied.map(([k]) => k)).toEqual(tokenizerKeys(vocab).map(([k]) => k));
    expect(copied.map(([k]) => k)).toEqual(
      expect.arrayContaining(["tokenizer.ggml.merges", "tokenizer.ggml.token_type", "tokenizer.ggml.pre", "tokenizer.ggml.bos_token_id", "tokenizer.chat_template"]),
    );
    expect(new Map(copied)).toEqual(new Map(tokenizerKeys(vocab)));
  });

  it("synth qwen2 - every tensor starts on the 32-byte alignment, back to back", () => {
    expect(qwenHeader.alignment).toBe(32);
    expect(qwenHeader.dataOffset % 32).toBe(0);
    let next = 0;
    for (const t of qwenHeader.tensors) {
      expect(t.offset, t.name).toBe(next);
      next += Math.ceil(t.byteSize / 32) * 32;
    }
    expect(qwenHeader.fileSize).toBe(qwenHeader.dataOffset + next);
  });

  it("synth weights - norms are 1, matrices have std scale/sqrt(fan_in), embeddings 2/sqrt(n_embd)", async () => {
    const values = (name: string) => readTensorValues(qwen.path, tensor(qwenHeader, name));
    expect((await values("blk.0.attn_norm.weight")).every((v) => v === 1)).toBe(true);
    expect((await values("output_norm.weight")).every((v) => v === 1)).toBe(true);
    const embd = stats(await values("token_embd.weight"));
    expect(Math.abs(embd.mean)).toBeLessThan(0.002);
    expect(embd.std).toBeCloseTo(2 / 8, 2);
    expect(stats(await values("blk.0.ffn_down.weight")).std).toBeCloseTo(1 / Math.sqrt(128), 2);
    expect(stats(await values("blk.1.attn_q.weight")).std).toBeCloseTo(3 / 8, 1);
    const bias = await values("blk.0.attn_k.bias");
    expect(bias.some((v) => v !== 0)).toBe(true);
    expect(stats(bias).std).toBeLessThan(0.05);
    // Different tensors get different streams of the seed.
    const [q, k] = [await values("blk.0.ffn_gate.weight"), await values("blk.0.ffn_up.weight")];
    expect(q.slice(0, 8)).not.toEqual(k.slice(0, 8));
  });

  it("synth llama - has llama.cpp's llama tensors: no biases, an untied output.weight, Q8_0 matrices and F32 norms", () => {
    expect(shapes(llamaHeader)).toEqual([
      ["token_embd.weight", [64, 32000], "Q8_0"],
      ...tinyBlock(0, false, "Q8_0"),
      ...tinyBlock(1, false, "Q8_0"),
      ["output_norm.weight", [64], "F32"],
      ["output.weight", [64, 32000], "Q8_0"],
    ]);
    expect(llama.parameterCount).toBe(4_170_048);
    expect(paramCount(llamaHeader)).toBe(llama.parameterCount);
    expect(u32(llamaHeader, "general.file_type")).toEqual({ type: "uint32", value: 7 });
    expect(u32(llamaHeader, "llama.rope.dimension_count")).toEqual({ type: "uint32", value: 16 });
    expect(u32(llamaHeader, "llama.vocab_size")).toEqual({ type: "uint32", value: 32000 });
    expect(u32(llamaHeader, "tokenizer.ggml.model")).toEqual({ type: "string", value: "llama" });
    expect(u32(llamaHeader, "tokenizer.ggml.add_bos_token")).toEqual({ type: "bool", value: true });
  });

  it("synth determinism - the same seed gives a byte-identical file, another seed a different one", async () => {
    const again = await synthesizeModel({ preset: "tiny", arch: "llama", quant: "q8_0", out: join(dir, "again.gguf") });
    expect(sha256(again.path)).toBe(sha256(llama.path));
    const other = await synthesizeModel({ preset: "tiny", arch: "llama", quant: "q8_0", seed: 2, out: join(dir, "seed2.gguf") });
    expect(other.fileSize).toBe(llama.fileSize);
    expect(sha256(other.path)).not.toBe(sha256(llama.path));
  });

  it("synth progress - reports bytes written, ending at the file size", async () => {
    const seen: { bytesWritten: number; totalBytes: number; tensorIndex: number }[] = [];
    const m = await synthesizeModel({ preset: "tiny", arch: "llama", quant: "f16", out: join(dir, "progress.gguf"), onProgress: (p) => seen.push(p) });
    expect(seen.at(-1)).toMatchObject({ bytesWritten: m.fileSize, totalBytes: m.fileSize, tensorIndex: m.tensorCount });
    expect(seen.length).toBeGreaterThan(m.tensorCount);
  });

  it("synth cache - ensureSynthModel generates once, then reuses the file; a stale or broken file is regenerated", async () => {
    const cacheDir = join(dir, "cache");
    const first = await ensureSynthModel("tiny", { arch: "llama", quant: "q8_0", cacheDir });
    expect(first).toEqual({ path: join(cacheDir, "llama-tiny-q8_0-seed1.gguf"), created: true });
    expect(sha256(first.path)).toBe(sha256(llama.path));
    const second = await ensureSynthModel("tiny", { arch: "llama", quant: "q8_0", cacheDir });
    expect(second).toEqual({ path: first.path, created: false });
    writeFileSync(first.path, "not a gguf");
    const third = await ensureSynthModel("tiny", { arch: "llama", quant: "q8_0", cacheDir });
    expect(third.created).toBe(true);
    expect(sha256(third.path)).toBe(sha256(llama.path));
    expect(synthModelFileName("bench", "qwen2", "f16", 7)).toBe("qwen2-bench-f16-seed7.gguf");
  });

  it("synth options - bad seeds and presets are refused before any file is written", async () => {
    await expect(synthesizeModel({ preset: "tiny", quant: "f16", seed: -1, out: join(dir, "x.gguf") })).rejects.toThrow(/seed must be an integer/);
    await expect(synthesizeModel({ preset: "huge" as "tiny", quant: "f16", out: join(dir, "x.gguf") })).rejects.toThrow(/unknown preset "huge"/);
    await expect(synthesizeModel({ preset: "tiny", arch: "bert", quant: "f16", out: join(dir, "x.gguf") })).rejects.toThrow(/preset tiny is made in qwen2 or llama, not bert/);
    await expect(synthesizeModel({ preset: "reranker-tiny", arch: "qwen2", quant: "f16", out: join(dir, "x.gguf") })).rejects.toThrow(/made in bert, not qwen2/);
    expect(existsSync(join(dir, "x.gguf"))).toBe(false);
  });
});

describe("synthetic re-ranker", () => {
  it("synth bert reranker - llama.cpp's bert tensors with a classification head, and llama.cpp re-ranks with it", async () => {
    const made = await synthesizeModel({ preset: "reranker-tiny", quant: "q8_0", out: join(dir, "reranker.gguf") });
    expect(made.arch).toBe("bert");
    const header = await readGgufHeader(made.path);
    const names = header.tensors.map((t) => t.name);
    expect(names.slice(0, 5)).toEqual(["token_embd.weight", "token_types.weight", "position_embd.weight", "token_embd_norm.weight", "token_embd_norm.bias"]);
    expect(names.slice(-4)).toEqual(["cls.weight", "cls.bias", "cls.output.weight", "cls.output.bias"]);
    expect(tensor(header, "cls.output.weight").shape).toEqual([64, 1]);
    expect(tensor(header, "blk.1.layer_output_norm.bias").shape).toEqual([64]);
    expect(u32(header, "bert.pooling_type")).toEqual({ type: "uint32", value: 4 });
    expect(u32(header, "bert.attention.causal")).toEqual({ type: "bool", value: false });
    expect(u32(header, "tokenizer.ggml.model")).toEqual({ type: "string", value: "bert" });
    expect(u32(header, "tokenizer.ggml.token_type_count")).toEqual({ type: "uint32", value: 2 });

    // llama.cpp loads it as a re-ranker (rank pooling through the cls head): one score per document, the
    // same whatever the batch around it, and different for different texts.
    const model = await Model.load(made.path);
    try {
      expect(model.info.architecture).toBe("bert");
      const ctx = await model.createContext({ kind: "rerank" });
      const query = "How do I collect oxygen gas over water?";
      const docs = ["Place a water-filled tube over the hole and let the gas push out the water.", "The cat sat on the mat.", "word ".repeat(2000)];
      const scores = await ctx.rerank(query, docs, { truncate: true });
      expect(scores).toHaveLength(3);
      for (const x of scores) expect(Number.isFinite(x)).toBe(true);
      expect(new Set(scores.map((x) => x.toFixed(6))).size).toBe(3);
      const alone = await ctx.rerank(query, [docs[1]!]);
      expect(alone[0]).toBeCloseTo(scores[1]!, 5);
    } finally {
      await model.dispose();
    }
  });
});

describe("synth vocab directory", () => {
  it("synth vocab - a missing vocab directory says to build @attr-rag/native first", () => {
    expect(() => resolveVocabDir(join(dir, "nowhere"))).toThrow(/build @attr-rag\/native first/);
  });

  it("synth vocab - defaults to <repo>/native/.cache/llama.cpp/models", () => {
    expect(resolveVocabDir()).toBe(join(import.meta.dirname, "..", "..", "..", "native", ".cache", "llama.cpp", "models"));
  });
});

describe("synth prng", () => {
  it("synth prng - is reproducible per (seed, stream) and close to a standard normal", () => {
    const draw = (seed: number, stream: string) => {
      const out = new Float32Array(100_000);
      new Prng(seed, stream).fillNormal(out, 1);
      return out;
    };
    const a = draw(1, "w");
    expect(draw(1, "w")).toEqual(a);
    expect(draw(2, "w").slice(0, 4)).not.toEqual(a.slice(0, 4));
    expect(draw(1, "v").slice(0, 4)).not.toEqual(a.slice(0, 4));
    const { mean, std } = stats(a);
    expect(Math.abs(mean)).toBeLessThan(0.01);
    expect(std).toBeCloseTo(1, 1.5);
    // Pinned first values: a change here changes every synthetic model (bump SYNTH_GENERATOR_VERSION).
    expect(Array.from(a.slice(0, 3), (v) => v.toFixed(6))).toEqual(["-0.962782", "0.247455", "0.130639"]);
  });
});
