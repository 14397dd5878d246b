import { describe, expect, it } from "vitest";
import { dequantizeQ8_0, Q8_0_BLOCK_BYTES, quantizeQ8_0 } from "../src/gguf/q8_0.js";

function block(values: number[]): Float32Array {
  const b = new Float32Array(32);
  b.set(values);
  return b;
}

const int8 = (bytes: Uint8Array) => [...bytes].map((b) => (b << 24) >> 24);

describe("Q8_0", () => {
  it("Q8_0 - quantizes a hand-worked block: f16 scale first, then 32 int8 rounded half away from zero (roundf)", () => {
    // amax 127 -> d = 1 (f16 0x3C00), id = 1, so q = roundf(x). Ties go away from zero (2.5 -> 3, -0.5 -> -1);
    // round-half-to-even would give 2 and -0 instead.
    const out = new Uint8Array(Q8_0_BLOCK_BYTES);
    quantizeQ8_0(block([127, -127, 2.5, -2.5, 0.5, -0.5, 1.49, -1.5, 0.4, 100.5]), out);
    expect([out[0], out[1]]).toEqual([0x00, 0x3c]);
    expect(int8(out.subarray(2, 12))).toEqual([127, -127, 3, -3, 1, -1, 1, -2, 0, 101]);
    expect(int8(out.subarray(12))).toEqual(new Array(22).fill(0));
  });

  it("Q8_0 - quantizes with the float32 scale but stores it as f16, as ggml's reference does", () => {
    // amax 1 -> d = 1/127 in float32; f16(d) = 2^-7 * (1 + 8/1024) = 0x2008. q uses id = 1/d (about 127).
    const out = new Uint8Array(Q8_0_BLOCK_BYTES);
    quantizeQ8_0(block([1, -1, 0.25, -0.1]), out);
    expect([out[0], out[1]]).toEqual([0x08, 0x20]);
    expect(int8(out.subarray(2, 6))).toEqual([127, -127, 32, -13]);
    const back = dequantizeQ8_0(out);
    expect(back[0]).toBe(127 * 0.00787353515625);
    expect(back[2]).toBe(32 * 0.00787353515625);
  });

  it("Q8_0 - an all-zero block has scale 0 and zero quants; several blocks are laid out back to back", () => {
    const values = new Float32Array(64);
    values.set([63.5, 1.25, -0.3], 32); // second block: d = 0.5 (0x3800), id = 2
    const out = new Uint8Array(2 * Q8_0_BLOCK_BYTES);
    quantizeQ8_0(values, out);
    expect([...out.subarray(0, Q8_0_BLOCK_BYTES)]).toEqual(new Array(Q8_0_BLOCK_BYTES).fill(0));
    expect([out[34], out[35]]).toEqual([0x00, 0x38]);
    expect(int8(out.subarray(36, 39))).toEqual([127, 3, -1]);
    expect([...dequantizeQ8_0(out).subarray(32, 35)]).toEqual([63.5, 1.5, -0.5]);
  });

  it("Q8_0 - round trip error stays within half a quantization step", () => {
    const values = new Float32Array(32 * 8).map((_, i) => Math.sin(i * 0.37) * (1 + (i % 7)));
    const out = new Uint8Array(8 * Q8_0_BLOCK_BYTES);
    quantizeQ8_0(values, out);
    const back = dequantizeQ8_0(out);
    for (let b = 0; b < 8; b++) {
      const amax = Math.max(...values.subarray(b * 32, b * 32 + 32).map(Math.abs));
      for (let j = 0; j < 32; j++) expect(Math.abs(back[b * 32 + j]! - values[b * 32 + j]!)).toBeLessThanOrEqual((amax / 127) * 0.51 + amax * 1e-3);
    }
  });

  it("Q8_0 - rejects input that is not whole blocks, naming the block size", () => {
    expect(() => quantizeQ8_0(new Float32Array(33), new Uint8Array(68))).toThrow(/multiple of the Q8_0 block size 32/);
    expect(() => dequantizeQ8_0(new Uint8Array(35))).toThrow(/34-byte Q8_0 blocks/);
  });
});
