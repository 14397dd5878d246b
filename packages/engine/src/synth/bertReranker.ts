// A BERT cross-encoder as llama.cpp loads it (src/models/bert.cpp): learned positions and token types, a
// layer norm after the embeddings and after each attention and feed-forward block, biases everywhere, and a
// classification head (cls: dense + tanh, cls.output: one relevance logit). Made with random weights, it is a
// real GGUF re-ranker for tests: llama.cpp scores (query, document) pairs with it through rank pooling, so the
// re-ranking path runs without a downloaded model. Its scores are meaningless, but they depend on the text.
import type { GgufValue } from "../gguf/types.js";
import { ggufValue } from "../gguf/values.js";
import { tensorPlanners, type SynthTensorPlan } from "./tensorPlan.js";
import { headDim, type ModelShape, type SynthQuant } from "./presets.js";

/** llama_pooling_type LLAMA_POOLING_TYPE_RANK */
const POOLING_RANK = 4;
const TOKEN_TYPES = 2;
const LAYER_NORM_EPSILON = 1e-12;

export const BERT_VOCAB_FILE = "ggml-vocab-bert-bge.gguf";

export function bertMetadata(shape: ModelShape): [string, GgufValue][] {
  const u32 = ggufValue.uint32;
  return [
    ["bert.block_count", u32(shape.blockCount)],
    ["bert.context_length", u32(shape.contextLength)],
    ["bert.embedding_length", u32(shape.embeddingLength)],
    ["bert.feed_forward_length", u32(shape.feedForwardLength)],
    ["bert.attention.head_count", u32(shape.headCount)],
    ["bert.attention.layer_norm_epsilon", ggufValue.float32(LAYER_NORM_EPSILON)],
    ["bert.attention.causal", ggufValue.bool(false)],
    ["bert.pooling_type", u32(POOLING_RANK)],
  ];
}

export function planBertTensors(shape: ModelShape, vocabSize: number, quant: SynthQuant): SynthTensorPlan[] {
  const { matrixType, ones, bias, matrix } = tensorPlanners(quant);
  const n = shape.embeddingLength;
  const nAttn = headDim(shape) * shape.headCount;
  const nFf = shape.feedForwardLength;
  // Embeddings are layer-normed right away, so their scale does not matter; small rows keep f16 exact enough.
  const embedding = (name: string, rows: number): SynthTensorPlan => ({ name, shape: [n, rows], type: "F32", init: { kind: "normal", std: 0.5 } });

  const plan: SynthTensorPlan[] = [
    { ...embedding("token_embd.weight", vocabSize), type: matrixType },
    embedding("token_types.weight", TOKEN_TYPES),
    embedding("position_embd.weight", shape.contextLength),
    ones("token_embd_norm.weight", n),
    bias("token_embd_norm.bias", n),
  ];
  for (let i = 0; i < shape.blockCount; i++) {
    const blk = `blk.${i}`;
    for (const p of ["q", "k", "v"]) plan.push(matrix(`${blk}.attn_${p}.weight`, n, nAttn), bias(`${blk}.attn_${p}.bias`, nAttn));
    plan.push(
      matrix(`${blk}.attn_output.weight`, nAttn, n),
      bias(`${blk}.attn_output.bias`, n),
      ones(`${blk}.attn_output_norm.weight`, n),
      bias(`${blk}.attn_output_norm.bias`, n),
      matrix(`${blk}.ffn_up.weight`, n, nFf),
      bias(`${blk}.ffn_up.bias`, nFf),
      matrix(`${blk}.ffn_down.weight`, nFf, n),
      bias(`${blk}.ffn_down.bias`, n),
      ones(`${blk}.layer_output_norm.weight`, n),
      bias(`${blk}.layer_output_norm.bias`, n),
    );
  }
  plan.push(matrix("cls.weight", n, n), bias("cls.bias", n), matrix("cls.output.weight", n, 1), bias("cls.output.bias", 1));
  return plan;
}
