// ggml's Q8_0: blocks of 32 values stored as { ggml_half d; int8_t qs[32]; } (34 bytes, no padding), the
// value being d * qs[j]. Quantization follows ggml's reference quantize_row_q8_0_ref step for step, each
// step rounded to float32 as C does, so our bytes equal llama-quantize's: amax = max |x|, d = amax / 127,
// id = 1 / d (0 when d is 0), qs[j] = roundf(x[j] * id) (ties away from zero, not to even), d stored as f16.
import { float16BitsToFloat32, float32ToFloat16Bits } from "./float16.js";

export const Q8_0_BLOCK_SIZE = 32;
export const Q8_0_BLOCK_BYTES = 2 + Q8_0_BLOCK_SIZE;

const fround = Math.fround;

/** C's roundf on an already-float32 value: halfway cases go away from zero. */
function roundHalfAwayFromZero(v: number): number {
  return v < 0 ? -Math.floor(-v + 0.5) : Math.floor(v + 0.5);
}

/** Quantizes `src` (a multiple of 32 values) into `out` starting at byte `outOffset`. */
export function quantizeQ8_0(src: Float32Array, out: Uint8Array, outOffset = 0): void {
  if (src.length % Q8_0_BLOCK_SIZE !== 0) {
    throw new RangeError(`quantizeQ8_0: ${src.length} values is not a multiple of the Q8_0 block size ${Q8_0_BLOCK_SIZE}`);
  }
  const blocks = src.length / Q8_0_BLOCK_SIZE;
  if (out.length - outOffset < blocks * Q8_0_BLOCK_BYTES) {
    throw new RangeError(`quantizeQ8_0: ${blocks} blocks need ${blocks * Q8_0_BLOCK_BYTES} bytes, the output has ${out.length - outOffset}`);
  }
  for (let b = 0; b < blocks; b++) {
    const base = b * Q8_0_BLOCK_SIZE;
    let amax = 0;
    for (let j = 0; j < Q8_0_BLOCK_SIZE; j++) amax = Math.max(amax, Math.abs(src[base + j]!));
    const d = fround(amax / 127);
    const id = d !== 0 ? fround(1 / d) : 0;
    const o = outOffset + b * Q8_0_BLOCK_BYTES;
    const h = float32ToFloat16Bits(d);
    out[o] = h & 0xff;
    out[o + 1] = h >>> 8;
    for (let j = 0; j < Q8_0_BLOCK_SIZE; j++) {
      // `& 0xff` stores the int8 two's complement byte.
      out[o + 2 + j] = roundHalfAwayFromZero(fround(src[base + j]! * id)) & 0xff;
    }
  }
}

/** The values Q8_0 bytes stand for (as ggml's dequantize_row_q8_0 computes them). */
export function dequantizeQ8_0(bytes: Uint8Array): Float32Array {
  if (bytes.length % Q8_0_BLOCK_BYTES !== 0) {
    throw new RangeError(`dequantizeQ8_0: ${bytes.length} bytes is not a whole number of ${Q8_0_BLOCK_BYTES}-byte Q8_0 blocks`);
  }
  const blocks = bytes.length / Q8_0_BLOCK_BYTES;
  const out = new Float32Array(blocks * Q8_0_BLOCK_SIZE);
  for (let b = 0; b < blocks; b++) {
    const o = b * Q8_0_BLOCK_BYTES;
    const d = float16BitsToFloat32(bytes[o]! | (bytes[o + 1]! << 8));
    for (let j = 0; j < Q8_0_BLOCK_SIZE; j++) out[b * Q8_0_BLOCK_SIZE + j] = d * ((bytes[o + 2 + j]! << 24) >> 24);
  }
  return out;
}
