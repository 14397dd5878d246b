// Seeded random numbers for synthetic weights. Everything is 32-bit integer arithmetic plus exact float
// operations (no Math.log/cos, whose last bits may differ between platforms or Node versions), so one seed
// gives byte-identical model files everywhere.

/** FNV-1a over the UTF-16 code units of `s`: a stable 32-bit hash to give each tensor its own stream. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** SplitMix32 step: spreads a seed's bits over xoshiro's state (which must not be all zero). */
function splitMix32(state: { s: number }): number {
  state.s = (state.s + 0x9e3779b9) | 0;
  let z = state.s;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

const rotl = (x: number, k: number) => (x << k) | (x >>> (32 - k));

// Sum of four uniform 16-bit integers: mean 4 * 65535 / 2, variance 4 * (65536^2 - 1) / 12.
const IRWIN_HALL_MEAN = 2 * 65535;
const IRWIN_HALL_INV_STD = 1 / Math.sqrt((65536 * 65536 - 1) / 3);

/** xoshiro128** (Blackman & Vigna): fast, 2^128 - 1 period, good enough statistics for random weights. */
export class Prng {
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  /** A generator for `seed` (a uint32) and a stream name, e.g. the tensor name. */
  constructor(seed: number, stream = "") {
    const state = { s: Math.imul(seed >>> 0, 0x9e3779b1) ^ hashString(stream) };
    this.#s0 = splitMix32(state) | 0;
    this.#s1 = splitMix32(state) | 0;
    this.#s2 = splitMix32(state) | 0;
    this.#s3 = splitMix32(state) | 0;
  }

  /** The next uniform uint32. */
  nextUint32(): number {
    const s1 = this.#s1;
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    this.#s2 ^= this.#s0;
    this.#s3 ^= s1;
    this.#s1 ^= this.#s2;
    this.#s0 ^= this.#s3;
    this.#s2 ^= t;
    this.#s3 = rotl(this.#s3, 11);
    return result;
  }

  /**
   * Fills `out` with approximately normal values of mean 0 and standard deviation `std` (an Irwin-Hall sum
   * of four uniforms: bounded at +-3.46 std, which is all random test weights need).
   */
  fillNormal(out: Float32Array, std: number): void {
    const scale = std * IRWIN_HALL_INV_STD;
    for (let i = 0; i < out.length; i++) {
      const a = this.nextUint32();
      const b = this.nextUint32();
      const sum = (a & 0xffff) + (a >>> 16) + (b & 0xffff) + (b >>> 16);
      out[i] = (sum - IRWIN_HALL_MEAN) * scale;
    }
  }
}
