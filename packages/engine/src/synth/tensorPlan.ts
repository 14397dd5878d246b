// What a synthetic model's tensors are made of, before any weight is drawn: a name, a ggml shape (input
// dimension first), a type and how to initialise it. Shared by every architecture we synthesize.
import type { GgmlType } from "../gguf/types.js";
import type { SynthQuant } from "./presets.js";

export type WeightInit = { readonly kind: "ones" } | { readonly kind: "normal"; readonly std: number };

export interface SynthTensorPlan {
  readonly name: string;
  readonly shape: readonly number[];
  readonly type: GgmlType;
  readonly init: WeightInit;
}

const BIAS_STD = 0.02;
const MATRIX_TYPE: Readonly<Record<SynthQuant, GgmlType>> = { f16: "F16", q8_0: "Q8_0" };

/** Builders for one weight type: 1-D tensors (norms, biases) stay F32, matrices take the quantization. */
export function tensorPlanners(quant: SynthQuant) {
  const matrixType = MATRIX_TYPE[quant];
  return {
    matrixType,
    ones: (name: string, n: number): SynthTensorPlan => ({ name, shape: [n], type: "F32", init: { kind: "ones" } }),
    bias: (name: string, n: number): SynthTensorPlan => ({ name, shape: [n], type: "F32", init: { kind: "normal", std: BIAS_STD } }),
    /** std scale/sqrt(fan_in): scale 1 keeps each projection's output at about the scale of its input. */
    matrix: (name: string, nIn: number, nOut: number, scale = 1): SynthTensorPlan => ({
      name,
      shape: [nIn, nOut],
      type: matrixType,
      init: { kind: "normal", std: scale / Math.sqrt(nIn) },
    }),
  };
}

export function countParameters(plan: readonly SynthTensorPlan[]): number {
  return plan.reduce((sum, t) => sum + t.shape.reduce((a, b) => a * b, 1), 0);
}
