// Writes a llama.cpp-loadable GGUF with random weights, a real tokenizer and a realistic layout, for tests
// and speed benchmarks where what the model says does not matter but how it runs does. Weights are made one
// tensor at a time, in slices of rows, straight into the writer, so memory stays small for any preset.
import { resolve } from "node:path";
import type { GgufWriteProgress, TensorProducer } from "../gguf/writeGguf.js";
import { writeGguf } from "../gguf/writeGguf.js";
import type { GgufValue } from "../gguf/types.js";
import { ggufValue } from "../gguf/values.js";
import { archMetadata, countParameters, fileTypeOf, planModelTensors, type SynthTensorPlan } from "./architectures.js";
import { PRESET_ARCHS, PRESET_SHAPES, type ModelShape, type SynthArch, type SynthPreset, type SynthQuant } from "./presets.js";
import { Prng } from "./prng.js";
import { loadTokenizer } from "./vocab.js";

/** Bumped whenever the same options would produce different bytes, so cached files are regenerated. */
export const SYNTH_GENERATOR_VERSION = 2;
export const SYNTH_VERSION_KEY = "attr_rag.synth.generator_version";
export const DEFAULT_SYNTH_SEED = 1;

/** Values per generated slice: ~4 MB of floats, whole rows, a multiple of every block size. */
const SLICE_VALUES = 1 << 20;

export interface SynthesizeModelOptions {
  readonly preset: SynthPreset;
  readonly arch?: SynthArch;
  readonly quant: SynthQuant;
  /** Output file; written to a temporary name first and renamed when complete. */
  readonly out: string;
  /** uint32; the same seed (and generator version) always gives a byte-identical file. */
  readonly seed?: number;
  /** Directory of llama.cpp's vocab GGUFs; defaults to <repo>/native/.cache/llama.cpp/models. */
  readonly vocabDir?: string;
  readonly onProgress?: (progress: GgufWriteProgress) => void;
}

export interface SynthesizedModel {
  readonly path: string;
  readonly arch: SynthArch;
  readonly preset: SynthPreset;
  readonly quant: SynthQuant;
  readonly seed: number;
  readonly shape: ModelShape;
  readonly vocabSize: number;
  readonly parameterCount: number;
  readonly tensorCount: number;
  readonly fileSize: number;
}

export async function synthesizeModel(options: SynthesizeModelOptions): Promise<SynthesizedModel> {
  const archs = PRESET_ARCHS[options.preset];
  if (archs === undefined) throw new RangeError(`unknown preset ${JSON.stringify(options.preset)}; use ${Object.keys(PRESET_ARCHS).join(", ")}`);
  const arch = options.arch ?? archs[0]!;
  if (!archs.includes(arch)) throw new RangeError(`preset ${options.preset} is made in ${archs.join(" or ")}, not ${arch}`);
  const seed = options.seed ?? DEFAULT_SYNTH_SEED;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new RangeError(`seed must be an integer in [0, 4294967295], got ${seed}`);
  }
  const shape = PRESET_SHAPES[options.preset];
  const tokenizer = await loadTokenizer(arch, options.vocabDir);
  const plan = planModelTensors(arch, shape, tokenizer.vocabSize, options.quant);

  const metadata: (readonly [string, GgufValue])[] = [
    ["general.architecture", ggufValue.string(arch)],
    ["general.name", ggufValue.string(`attr-rag synthetic ${arch} ${options.preset}`)],
    [
      "general.description",
      ggufValue.string(`Random weights (seed ${seed}) with the real ${arch} tokenizer, made by attr-rag for tests and benchmarks; its text is meaningless.`),
    ],
    ["general.file_type", ggufValue.uint32(fileTypeOf(options.quant))],
    ["general.quantization_version", ggufValue.uint32(2)],
    ["general.alignment", ggufValue.uint32(32)],
    [SYNTH_VERSION_KEY, ggufValue.uint32(SYNTH_GENERATOR_VERSION)],
    ...archMetadata(arch, shape, tokenizer.vocabSize),
    ...tokenizer.metadata,
  ];

  const out = resolve(options.out);
  const result = await writeGguf(out, {
    metadata,
    tensors: plan.map((t) => ({ name: t.name, shape: t.shape, type: t.type, data: weightsOf(t, seed) })),
    onProgress: options.onProgress,
  });
  return {
    path: out,
    arch,
    preset: options.preset,
    quant: options.quant,
    seed,
    shape,
    vocabSize: tokenizer.vocabSize,
    parameterCount: countParameters(plan),
    tensorCount: plan.length,
    fileSize: result.fileSize,
  };
}

/** A producer yielding the tensor in slices of whole rows; each tensor has its own stream of the seed. */
function weightsOf(t: SynthTensorPlan, seed: number): TensorProducer {
  return function* () {
    const total = t.shape.reduce((a, b) => a * b, 1);
    if (t.init.kind === "ones") {
      yield new Float32Array(total).fill(1);
      return;
    }
    const rng = new Prng(seed, t.name);
    const rowLength = t.shape[0]!;
    const slice = Math.max(1, Math.floor(SLICE_VALUES / rowLength)) * rowLength;
    for (let done = 0; done < total; done += slice) {
      const values = new Float32Array(Math.min(slice, total - done));
      rng.fillNormal(values, t.init.std);
      yield values;
    }
  };
}
