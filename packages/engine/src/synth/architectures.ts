// What llama.cpp's loader expects of each architecture we synthesize: hyperparameter keys (with the GGUF
// types it insists on: counts uint32, floats float32) and tensor names/shapes as its load_arch_tensors
// creates them (src/models/qwen2.cpp, src/models/llama.cpp; bert in bertReranker.ts). Shapes are in ggml
// order, input dimension first: a weight mapping n_in -> n_out is [n_in, n_out].
import type { GgufValue } from "../gguf/types.js";
import { ggufValue } from "../gguf/values.js";
import { BERT_VOCAB_FILE, bertMetadata, planBertTensors } from "./bertReranker.js";
import { headDim, type ModelShape, type SynthArch, type SynthQuant } from "./presets.js";
import { tensorPlanners, type SynthTensorPlan } from "./tensorPlan.js";

type DecoderArch = Exclude<SynthArch, "bert">;

export { countParameters, type SynthTensorPlan, type WeightInit } from "./tensorPlan.js";

interface ArchSpec {
  /** The vocab-only GGUF in llama.cpp's models/ directory whose tokenizer we copy. */
  readonly vocabFile: string;
  readonly ropeFreqBase: number;
  readonly rmsEpsilon: number;
  /** Qwen2 has biases on q, k and v; llama has none. */
  readonly qkvBias: boolean;
  /** Without output.weight llama.cpp reuses token_embd as the LM head (as Qwen2-0.5B ships). */
  readonly tiedEmbeddings: boolean;
}

export const ARCH_SPECS: Readonly<Record<DecoderArch, ArchSpec>> = {
  qwen2: { vocabFile: "ggml-vocab-qwen2.gguf", ropeFreqBase: 1_000_000, rmsEpsilon: 1e-6, qkvBias: true, tiedEmbeddings: true },
  llama: { vocabFile: "ggml-vocab-llama-spm.gguf", ropeFreqBase: 10_000, rmsEpsilon: 1e-5, qkvBias: false, tiedEmbeddings: false },
};

/*
 * Init scales, chosen by decoding synthetic models with llama.cpp and checking that greedy continuations
 * depend on the whole prompt (what occlusion tests need), not just on its last token:
 * - token_embd (and an untied output.weight) get std 2/sqrt(n_embd), so the embedding is small next to the
 *   blocks' outputs (each about 1 per element after RMS norm). With std 1 the residual stream stays
 *   mostly the current token's embedding, and with tied embeddings the model just repeats the last prompt
 *   token. 2/sqrt(n_embd) also makes logits' standard deviation 2, a usable spread for sampling.
 * - attn_q/attn_k get qkScale (see ModelShape) times the usual 1/sqrt(fan_in): at 3 attention is sharp enough
 *   that changing the first sentence of a 200-token prompt changes the first generated token (at 1 it does not).
 */
const EMBEDDING_SCALE = 2;

/** ggml file types (llama_ftype) for general.file_type. */
const FILE_TYPE: Readonly<Record<SynthQuant, number>> = { f16: 1, q8_0: 7 };

/** The vocab-only GGUF in llama.cpp's models/ directory whose tokenizer an architecture's models copy. */
export function vocabFileOf(arch: SynthArch): string {
  return arch === "bert" ? BERT_VOCAB_FILE : ARCH_SPECS[arch].vocabFile;
}

/** `<arch>.*` hyperparameter keys, in the order llama.cpp's converter writes them. */
export function archMetadata(arch: SynthArch, shape: ModelShape, vocabSize: number): [string, GgufValue][] {
  if (arch === "bert") return bertMetadata(shape);
  const spec = ARCH_SPECS[arch];
  const u32 = ggufValue.uint32;
  const keys: [string, GgufValue][] = [
    [`${arch}.block_count`, u32(shape.blockCount)],
    [`${arch}.context_length`, u32(shape.contextLength)],
    [`${arch}.embedding_length`, u32(shape.embeddingLength)],
    [`${arch}.feed_forward_length`, u32(shape.feedForwardLength)],
    [`${arch}.attention.head_count`, u32(shape.headCount)],
    [`${arch}.attention.head_count_kv`, u32(shape.headCountKv)],
    [`${arch}.rope.freq_base`, ggufValue.float32(spec.ropeFreqBase)],
    [`${arch}.attention.layer_norm_rms_epsilon`, ggufValue.float32(spec.rmsEpsilon)],
  ];
  if (arch === "llama") {
    // llama.cpp checks n_rot == head size for llama; qwen2 files conventionally omit both keys.
    keys.push([`${arch}.rope.dimension_count`, u32(headDim(shape))], [`${arch}.vocab_size`, u32(vocabSize)]);
  }
  return keys;
}

export function fileTypeOf(quant: SynthQuant): number {
  return FILE_TYPE[quant];
}

/** Every tensor of the model with its shape, type and how to initialise it. 1-D tensors stay F32. */
export function planModelTensors(arch: SynthArch, shape: ModelShape, vocabSize: number, quant: SynthQuant): SynthTensorPlan[] {
  if (arch === "bert") return planBertTensors(shape, vocabSize, quant);
  const spec = ARCH_SPECS[arch];
  const { matrixType, ones, bias, matrix } = tensorPlanners(quant);
  const nEmbd = shape.embeddingLength;
  const nQ = headDim(shape) * shape.headCount;
  const nKv = headDim(shape) * shape.headCountKv;
  const nFf = shape.feedForwardLength;
  const embeddingStd = EMBEDDING_SCALE / Math.sqrt(nEmbd);

  const plan: SynthTensorPlan[] = [
    { name: "token_embd.weight", shape: [nEmbd, vocabSize], type: matrixType, init: { kind: "normal", std: embeddingStd } },
  ];
  for (let i = 0; i < shape.blockCount; i++) {
    const blk = `blk.${i}`;
    plan.push(ones(`${blk}.attn_norm.weight`, nEmbd), matrix(`${blk}.attn_q.weight`, nEmbd, nQ, shape.qkScale));
    if (spec.qkvBias) plan.push(bias(`${blk}.attn_q.bias`, nQ));
    plan.push(matrix(`${blk}.attn_k.weight`, nEmbd, nKv, shape.qkScale));
    if (spec.qkvBias) plan.push(bias(`${blk}.attn_k.bias`, nKv));
    plan.push(matrix(`${blk}.attn_v.weight`, nEmbd, nKv));
    if (spec.qkvBias) plan.push(bias(`${blk}.attn_v.bias`, nKv));
    plan.push(
      matrix(`${blk}.attn_output.weight`, nQ, nEmbd),
      ones(`${blk}.ffn_norm.weight`, nEmbd),
      matrix(`${blk}.ffn_gate.weight`, nEmbd, nFf),
      matrix(`${blk}.ffn_up.weight`, nEmbd, nFf),
      matrix(`${blk}.ffn_down.weight`, nFf, nEmbd),
    );
  }
  plan.push(ones("output_norm.weight", nEmbd));
  if (!spec.tiedEmbeddings) {
    plan.push({ name: "output.weight", shape: [nEmbd, vocabSize], type: matrixType, init: { kind: "normal", std: embeddingStd } });
  }
  return plan;
}
