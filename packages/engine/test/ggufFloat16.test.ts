import { describe, expect, it } from "vitest";
import { decodeFloat16, encodeFloat16, float16BitsToFloat32, float32ToFloat16Bits } from "../src/gguf/float16.js";

const hex = (h: number) => `0x${h.toString(16).padStart(4, "0")}`;

describe("float16", () => {
  it("float16 - converts hand-worked values to their IEEE binary16 bits", () => {
    const cases: [number, number][] = [
      [1.0, 0x3c00],
      [-2.0, 0xc000],
      [0.5, 0x3800],
      [0.1, 0x2e66], // 0.0999755859375, the nearest binary16
      [65504, 0x7bff], // largest finite
      [0, 0x0000],
      [-0, 0x8000],
      [2 ** -14, 0x0400], // smallest normal
      [2 ** -24, 0x0001], // smallest subnormal
      [1023 * 2 ** -24, 0x03ff], // largest subnormal
      [Number.POSITIVE_INFINITY, 0x7c00],
      [Number.NEGATIVE_INFINITY, 0xfc00],
      [1e6, 0x7c00],
      [-1e6, 0xfc00],
    ];
    for (const [x, bits] of cases) expect(hex(float32ToFloat16Bits(x)), `f16(${x})`).toBe(hex(bits));
    expect(hex(float32ToFloat16Bits(Number.NaN))).toBe("0x7e00");
  });

  it("float16 - rounds to nearest with ties to even, in the normal and the subnormal range and at overflow", () => {
    // Halfway between 1 (0x3C00, even) and 1 + 2^-10 (0x3C01): goes down to the even one.
    expect(hex(float32ToFloat16Bits(1 + 2 ** -11))).toBe("0x3c00");
    // Halfway between 0x3C01 (odd) and 0x3C02: goes up to the even one.
    expect(hex(float32ToFloat16Bits(1 + 3 * 2 ** -11))).toBe("0x3c02");
    // Just above halfway rounds up.
    expect(hex(float32ToFloat16Bits(1 + 2 ** -11 + 2 ** -20))).toBe("0x3c01");
    // Subnormals: 2^-25 is halfway between 0 and 2^-24 (goes to 0), 3 * 2^-25 halfway between 1 and 2 units (goes to 2).
    expect(hex(float32ToFloat16Bits(2 ** -25))).toBe("0x0000");
    expect(hex(float32ToFloat16Bits(1.5 * 2 ** -25))).toBe("0x0001");
    expect(hex(float32ToFloat16Bits(3 * 2 ** -25))).toBe("0x0002");
    // Halfway between the largest subnormal (odd) and the smallest normal: carries into the exponent.
    expect(hex(float32ToFloat16Bits(1023.5 * 2 ** -24))).toBe("0x0400");
    // 65520 is halfway between 65504 (odd mantissa) and 2^16 (out of range): rounds to infinity, 65519 does not.
    expect(hex(float32ToFloat16Bits(65520))).toBe("0x7c00");
    expect(hex(float32ToFloat16Bits(65519))).toBe("0x7bff");
  });

  it("float16 - every finite binary16 value round-trips, and every midpoint goes to the even neighbour", () => {
    for (let h = 0; h < 0x7c00; h++) {
      const v = float16BitsToFloat32(h);
      if (float32ToFloat16Bits(v) !== h || float32ToFloat16Bits(-v) !== (h | 0x8000)) throw new Error(`round trip failed at ${hex(h)}`);
      if (h + 1 < 0x7c00) {
        const mid = (v + float16BitsToFloat32(h + 1)) / 2; // exact in float32: binary16 has 11 significant bits
        const even = h % 2 === 0 ? h : h + 1;
        if (float32ToFloat16Bits(mid) !== even) throw new Error(`midpoint above ${hex(h)} rounded to ${hex(float32ToFloat16Bits(mid))}`);
      }
    }
  });

  it("float16 - encodes little-endian and decodes back", () => {
    const out = new Uint8Array(6);
    encodeFloat16(new Float32Array([1, -2, 65504]), out);
    expect([...out]).toEqual([0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b]);
    expect([...decodeFloat16(out)]).toEqual([1, -2, 65504]);
    expect(() => encodeFloat16(new Float32Array(4), new Uint8Array(7))).toThrow(/need 8 bytes/);
  });
});
