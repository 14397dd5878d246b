import { existsSync } from "node:fs";
import { join } from "node:path";
import { defaultModelPath, shippedModelPath } from "../../src/models/modelLocator.js";
import { ensureSynthModel } from "../../src/synth/ensureSynthModel.js";

/**
 * The real model the engine tests run: examples/models/stories260K.gguf (a tiny TinyStories llama that
 * ignores instructions but continues stories), or the one ATTR_RAG_MODEL names. A missing file fails the
 * tests that load it; nothing skips.
 */
export const TEST_MODEL = defaultModelPath();

/** A synthetic qwen2-layout model with random weights and the real qwen2 tokenizer, cached under .cache/models. */
export async function tinySynthModel(arch: "qwen2" | "llama" = "qwen2"): Promise<string> {
  const { path } = await ensureSynthModel("tiny", { arch, quant: "q8_0" });
  return path;
}

import { mkdir, rename } from "node:fs/promises";
import { readGgufHeader } from "../../src/gguf/readHeader.js";
import { readTensorBytes } from "../../src/gguf/readTensor.js";
import { writeGguf } from "../../src/gguf/writeGguf.js";
import type { GgufValue } from "../../src/gguf/types.js";
import { defaultSynthCacheDir } from "../../src/synth/ensureSynthModel.js";

/**
 * stories260K never ends a story within a few hundred tokens, so to exercise answers that end at an
 * end-of-generation token we copy it with its EOS id set to the token "." — the same real weights, but
 * every sentence end is now an EOS.
 */
export async function storiesModelWithPeriodEos(): Promise<string> {
  const dir = defaultSynthCacheDir();
  const out = join(dir, "stories260K-eos-period.gguf");
  if (existsSync(out)) return out;
  await mkdir(dir, { recursive: true });
  const stories = shippedModelPath();
  const header = await readGgufHeader(stories);
  const tokens = header.metadata.get("tokenizer.ggml.tokens");
  if (!tokens || tokens.type !== "array" || tokens.itemType !== "string") throw new Error("stories260K has no token list");
  const period = tokens.value.indexOf(".");
  if (period < 0) throw new Error('stories260K has no "." token');
  const eos = header.metadata.get("tokenizer.ggml.eos_token_id")!;
  const metadata = new Map<string, GgufValue>(header.metadata);
  metadata.set("tokenizer.ggml.eos_token_id", { ...eos, value: period } as GgufValue);
  const tmp = `${out}.${process.pid}.tmp`;
  await writeGguf(tmp, {
    metadata,
    tensors: header.tensors.map((t) => ({ name: t.name, shape: t.shape, type: t.type, data: () => readTensorBytes(stories, t) })),
  });
  await rename(tmp, out);
  return out;
}

/** The models the occlusion strategies are held to: stories260K, its EOS-at-"." copy, a synthetic qwen2. */
export const OCCLUSION_TEST_MODELS = {
  stories260K: async () => TEST_MODEL,
  "stories260K with EOS at '.'": storiesModelWithPeriodEos,
  "synthetic qwen2 tiny": () => tinySynthModel("qwen2"),
} as const;
