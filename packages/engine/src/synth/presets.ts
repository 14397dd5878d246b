// Model shapes for synthetic models. `tiny` keeps tests fast (the vocabulary dominates its size); `bench` is
// a scaled-down Qwen2-0.5B (same head size 64, GQA ratio 5:1, tied embeddings with qwen2) that still has
// >100M parameters with the qwen2 vocabulary but decodes at a useful speed on two CPU cores; `qwen2-0.5b` has
// Qwen2-0.5B's exact shape (494M parameters), where, as in real deployments, the transformer body rather than
// the vocabulary's output row dominates each generated token.

export type SynthPreset = "tiny" | "bench" | "qwen2-0.5b" | "reranker-tiny";
export type SynthArch = "qwen2" | "llama" | "bert";
export type SynthQuant = "f16" | "q8_0";

export const SYNTH_PRESETS: readonly SynthPreset[] = ["tiny", "bench", "qwen2-0.5b", "reranker-tiny"];
export const SYNTH_ARCHS: readonly SynthArch[] = ["qwen2", "llama", "bert"];

/**
 * The architectures each preset can be made in, the default first: the generators are decoders (qwen2 or
 * llama layout); `reranker-tiny` is a BERT cross-encoder with a classification head, which llama.cpp runs
 * with rank pooling, as a GGUF re-ranker (bge-reranker and the like) would be.
 */
export const PRESET_ARCHS: Readonly<Record<SynthPreset, readonly SynthArch[]>> = {
  tiny: ["qwen2", "llama"],
  bench: ["qwen2", "llama"],
  "qwen2-0.5b": ["qwen2", "llama"],
  "reranker-tiny": ["bert"],
};
export const SYNTH_QUANTS: readonly SynthQuant[] = ["f16", "q8_0"];

export interface ModelShape {
  readonly contextLength: number;
  readonly embeddingLength: number;
  readonly blockCount: number;
  readonly feedForwardLength: number;
  readonly headCount: number;
  readonly headCountKv: number;
  /**
   * attn_q/attn_k init std as a multiple of 1/sqrt(fan_in): how sharply attention picks tokens out of the
   * context. 3 (tiny): every change to the prompt changes the answer, which is what occlusion tests need.
   * 1 (bench, the usual init): attention is diffuse, so removing one of many context sets usually leaves the
   * answer as it was or changes it late, as with a real model and mostly-distractor retrieval.
   */
  readonly qkScale: number;
}

export const PRESET_SHAPES: Readonly<Record<SynthPreset, ModelShape>> = {
  tiny: { contextLength: 2048, embeddingLength: 64, blockCount: 2, feedForwardLength: 128, headCount: 4, headCountKv: 2, qkScale: 3 },
  bench: { contextLength: 4096, embeddingLength: 640, blockCount: 8, feedForwardLength: 1792, headCount: 10, headCountKv: 2, qkScale: 1 },
  "qwen2-0.5b": { contextLength: 32768, embeddingLength: 896, blockCount: 24, feedForwardLength: 4864, headCount: 14, headCountKv: 2, qkScale: 1 },
  "reranker-tiny": { contextLength: 512, embeddingLength: 64, blockCount: 2, feedForwardLength: 128, headCount: 4, headCountKv: 4, qkScale: 1 },
};

export function headDim(shape: ModelShape): number {
  return shape.embeddingLength / shape.headCount;
}
