// IEEE 754 binary16 conversion done on the float32 bit pattern with integer arithmetic only, so the result
// is the same on every platform and equals what ggml's GGML_FP32_TO_FP16 (F16C / its portable fallback)
// produces: round to nearest, ties to even, overflow to infinity, subnormals kept, NaN -> quiet NaN 0x7E00.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The binary16 bits nearest to `x` after `x` is first rounded to float32 (as a C float argument would be). */
export function float32ToFloat16Bits(x: number): number {
  f32[0] = x;
  const w = u32[0]!;
  const sign = (w >>> 16) & 0x8000;
  const exp = (w >>> 23) & 0xff;
  const mant = w & 0x7fffff;

  if (exp === 0xff) return sign | (mant !== 0 ? 0x7e00 : 0x7c00);
  // float32 exponent 143 is 2^16, beyond binary16's largest finite value (65504).
  if (exp >= 143) return sign | 0x7c00;

  if (exp >= 113) {
    // Normal in binary16 (2^-14 and up): rebias the exponent, keep the top 10 mantissa bits and round on
    // the 13 dropped ones. A carry out of the mantissa correctly bumps the exponent, up to infinity.
    let half = ((exp - 112) << 10) | (mant >>> 13);
    const dropped = mant & 0x1fff;
    if (dropped > 0x1000 || (dropped === 0x1000 && (half & 1) === 1)) half += 1;
    return sign | half;
  }

  // Subnormal in binary16: count in units of 2^-24. Below 2^-25 everything rounds to zero (2^-25 itself is
  // a tie and goes to the even value 0), which the shift arithmetic below would also give, but a shift of
  // 32 or more is not defined for JS integers.
  if (exp < 102) return sign;
  const significand = mant | 0x800000; // value = significand * 2^(exp - 150)
  const shift = 126 - exp; // 14..24
  let half = significand >>> shift;
  const dropped = significand & ((1 << shift) - 1);
  const halfway = 1 << (shift - 1);
  if (dropped > halfway || (dropped === halfway && (half & 1) === 1)) half += 1;
  return sign | half;
}

/** The value of binary16 bits `h` (exact: every binary16 value is a float64). */
export function float16BitsToFloat32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant !== 0 ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** Encodes `src` as little-endian binary16 into `out` (2 bytes per value) starting at byte `outOffset`. */
export function encodeFloat16(src: Float32Array, out: Uint8Array, outOffset = 0): void {
  if (out.length - outOffset < src.length * 2) {
    throw new RangeError(`encodeFloat16: ${src.length} values need ${src.length * 2} bytes, the output has ${out.length - outOffset}`);
  }
  for (let i = 0, o = outOffset; i < src.length; i++, o += 2) {
    const h = float32ToFloat16Bits(src[i]!);
    out[o] = h & 0xff;
    out[o + 1] = h >>> 8;
  }
}

/** Decodes little-endian binary16 bytes into float values. */
export function decodeFloat16(bytes: Uint8Array): Float32Array {
  if (bytes.length % 2 !== 0) throw new RangeError(`decodeFloat16: ${bytes.length} bytes is not a whole number of binary16 values`);
  const out = new Float32Array(bytes.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = float16BitsToFloat32(bytes[2 * i]! | (bytes[2 * i + 1]! << 8));
  return out;
}
