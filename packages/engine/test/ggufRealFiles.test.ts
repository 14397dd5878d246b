// Reads GGUF files written by llama.cpp's own tools, so the reader is checked against the real format and
// not only against our writer. Both files are always there: the vocab comes with the native build, the
// model with the repository; a missing one fails these tests.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readGgufHeader } from "../src/gguf/readHeader.js";
import { readTensorValues } from "../src/gguf/readTensor.js";
import { shippedModelPath } from "../src/models/modelLocator.js";

const QWEN2_VOCAB = fileURLToPath(new URL("../../../native/.cache/llama.cpp/models/ggml-vocab-qwen2.gguf", import.meta.url));
const STORIES = shippedModelPath();

describe("gguf reader on llama.cpp's qwen2 vocab", () => {
  it("gguf reader - reads the qwen2 vocab-only GGUF: gpt2 BPE tokenizer with 151936 tokens and typed ids", async () => {
    const h = await readGgufHeader(QWEN2_VOCAB);
    expect(h.version).toBe(3);
    expect(h.tensors).toHaveLength(0);
    expect(h.dataOffset).toBe(h.fileSize);
    expect(h.metadata.get("general.architecture")).toEqual({ type: "string", value: "qwen2" });
    expect(h.metadata.get("tokenizer.ggml.model")).toEqual({ type: "string", value: "gpt2" });
    expect(h.metadata.get("tokenizer.ggml.pre")).toEqual({ type: "string", value: "qwen2" });
    expect(h.metadata.get("tokenizer.ggml.eos_token_id")).toEqual({ type: "uint32", value: 151643 });
    expect(h.metadata.get("qwen2.rope.freq_base")).toEqual({ type: "float32", value: 1_000_000 });

    const tokens = h.metadata.get("tokenizer.ggml.tokens");
    const types = h.metadata.get("tokenizer.ggml.token_type");
    const merges = h.metadata.get("tokenizer.ggml.merges");
    if (tokens?.type !== "array" || tokens.itemType !== "string") throw new Error("tokens should be a string array");
    if (types?.type !== "array" || types.itemType !== "int32") throw new Error("token_type should be an int32 array");
    if (merges?.type !== "array" || merges.itemType !== "string") throw new Error("merges should be a string array");
    expect(tokens.value).toHaveLength(151936);
    expect(types.value).toBeInstanceOf(Int32Array);
    expect(types.value).toHaveLength(151936);
    expect([tokens.value[0], tokens.value[151643], tokens.value[151644]]).toEqual(["!", "<|endoftext|>", "<|im_start|>"]);
    expect(types.value[151643]).toBe(3); // control token
    expect(merges.value).toHaveLength(151387);
    expect(merges.value[0]).toBe("Ġ Ġ");
    const template = h.metadata.get("tokenizer.chat_template");
    expect(template?.type === "string" && template.value.includes("<|im_start|>assistant")).toBe(true);
  });
});

describe("gguf reader on stories260K", () => {
  it("gguf reader - reads stories260K's llama hyperparameters, 48 tensors in ggml dimension order, and their data", async () => {
    const h = await readGgufHeader(STORIES);
    const u32 = (key: string) => {
      const v = h.metadata.get(key);
      if (v?.type !== "uint32") throw new Error(`${key} should be uint32, is ${v?.type}`);
      return v.value;
    };
    expect(h.metadata.get("general.architecture")).toEqual({ type: "string", value: "llama" });
    expect([u32("llama.embedding_length"), u32("llama.block_count"), u32("llama.feed_forward_length")]).toEqual([64, 5, 172]);
    expect([u32("llama.attention.head_count"), u32("llama.attention.head_count_kv"), u32("llama.rope.dimension_count")]).toEqual([8, 4, 8]);
    expect(h.alignment).toBe(32);
    expect(h.dataOffset).toBe(14176);
    expect(h.fileSize).toBe(1185376);
    expect(h.tensors).toHaveLength(48);
    const byName = new Map(h.tensors.map((t) => [t.name, t]));
    expect(byName.get("token_embd.weight")).toMatchObject({ type: "F32", shape: [64, 512], offset: 0, byteSize: 131072 });
    expect(byName.get("blk.0.ffn_down.weight")).toMatchObject({ type: "F32", shape: [172, 64] });
    expect(byName.get("blk.0.attn_k.weight")).toMatchObject({ shape: [64, 32] }); // 4 KV heads of 8
    const last = h.tensors.at(-1)!;
    expect(last.fileOffset + last.byteSize).toBe(h.fileSize);

    const norm = await readTensorValues(STORIES, byName.get("output_norm.weight")!);
    expect(norm).toHaveLength(64);
    expect(norm.every((v) => Number.isFinite(v) && v !== 0)).toBe(true);
  });
});
