import { describe, expect, it } from "vitest";
import { lcsLength, lcsReferenceIndices } from "../../src/metrics/lcs.js";

/** Test oracle: rouge-score's full-table LCS and its backtrack, transcribed literally. */
function fullTableBacktrack(ref: number[], can: number[]): { length: number; indices: number[] } {
  const t = Array.from({ length: ref.length + 1 }, () => new Array<number>(can.length + 1).fill(0));
  for (let i = 1; i <= ref.length; i++) {
    for (let j = 1; j <= can.length; j++) {
      t[i]![j] = ref[i - 1] === can[j - 1] ? t[i - 1]![j - 1]! + 1 : Math.max(t[i - 1]![j]!, t[i]![j - 1]!);
    }
  }
  const indices: number[] = [];
  let i = ref.length;
  let j = can.length;
  while (i > 0 && j > 0) {
    if (ref[i - 1] === can[j - 1]) {
      indices.unshift(i - 1);
      i--;
      j--;
    } else if (t[i]![j - 1]! > t[i - 1]![j]!) j--;
    else i--;
  }
  return { length: t[ref.length]![can.length]!, indices };
}

/** Small deterministic PRNG (mulberry32) so failures are reproducible. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomSequence(next: () => number, length: number, alphabet: number): number[] {
  return Array.from({ length }, () => Math.floor(next() * alphabet));
}

describe("lcs", () => {
  it("lcs - length equals the full-table LCS on random sequences", () => {
    const next = rng(1);
    for (let k = 0; k < 300; k++) {
      const a = randomSequence(next, Math.floor(next() * 30), 1 + Math.floor(next() * 6));
      const b = randomSequence(next, Math.floor(next() * 30), 1 + Math.floor(next() * 6));
      expect(lcsLength(a, b)).toBe(fullTableBacktrack(a, b).length);
    }
  });

  it("lcs - checkpointed backtrack picks the same reference indices as rouge-score for any block size", () => {
    const next = rng(2);
    for (let k = 0; k < 300; k++) {
      const ref = randomSequence(next, Math.floor(next() * 40), 1 + Math.floor(next() * 5));
      const can = randomSequence(next, Math.floor(next() * 40), 1 + Math.floor(next() * 5));
      const want = fullTableBacktrack(ref, can).indices;
      for (const block of [undefined, 1, 2, 3, 7, 64]) {
        expect(lcsReferenceIndices(ref, can, block), `case ${k}, block ${block}`).toEqual(want);
      }
    }
  });

  it("lcs - empty inputs give length 0 and no indices", () => {
    expect(lcsLength([], [1, 2])).toBe(0);
    expect(lcsReferenceIndices([1, 2], [])).toEqual([]);
  });

  it("lcs - 20k x 20k tokens: length in linear memory, backtrack in O(m*sqrt(n)) memory", () => {
    // Candidate = reference with every 10th token removed, so the LCS is the whole candidate.
    const n = 20_000;
    const ref = Array.from({ length: n }, (_, i) => (i * 7919) % 503);
    const can = ref.filter((_, i) => i % 10 !== 0);
    expect(lcsLength(ref, can)).toBe(can.length);
    const indices = lcsReferenceIndices(ref, can);
    expect(indices.length).toBe(can.length);
    expect(indices.every((index, k) => ref[index] === can[k])).toBe(true);
  }, 60_000);
});
