// Reproducible randomness for the sampling methods: one seed gives the same coalitions on every machine, so a
// run can be repeated and two methods compared on the same draws. SplitMix32 seeding, xorshift128+ style
// 32-bit generator; uniform doubles from 53 random bits.

export class SeededRandom {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = () => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#a = next();
    this.#b = next();
    this.#c = next();
    this.#d = next() | 1;
  }

  /** xoshiro128** step: a uniform 32-bit unsigned integer. */
  uint32(): number {
    const result = Math.imul(rotl(Math.imul(this.#b, 5), 7), 9) >>> 0;
    const t = this.#b << 9;
    this.#c ^= this.#a;
    this.#d ^= this.#b;
    this.#b ^= this.#c;
    this.#a ^= this.#d;
    this.#c ^= t;
    this.#d = rotl(this.#d, 11);
    return result;
  }

  /** Uniform in [0, 1) with 53 bits. */
  next(): number {
    return ((this.uint32() >>> 5) * 67108864 + (this.uint32() >>> 6)) / 9007199254740992;
  }

  /** Uniform integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** A uniformly random permutation of 0..n-1 (Fisher–Yates). */
  permutation(n: number): number[] {
    const p = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = this.below(i + 1);
      [p[i], p[j]] = [p[j]!, p[i]!];
    }
    return p;
  }

  /** Index drawn with probability proportional to weights[i]. */
  weighted(weights: readonly number[]): number {
    const total = weights.reduce((a, b) => a + b, 0);
    let u = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      u -= weights[i]!;
      if (u < 0) return i;
    }
    return weights.length - 1;
  }

  /** A uniformly random subset of size k of 0..n-1, ascending. */
  subset(n: number, k: number): number[] {
    return this.permutation(n).slice(0, k).sort((a, b) => a - b);
  }
}

const rotl = (x: number, k: number) => (x << k) | (x >>> (32 - k));
