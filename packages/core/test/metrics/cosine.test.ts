import { describe, expect, it } from "vitest";
import { cosineSimilarity } from "../../src/metrics/cosine.js";

describe("cosineSimilarity", () => {
  it("cosineSimilarity - hand-worked: (1, 2, 3) and (4, 5, 6)", () => {
    // dot = 4 + 10 + 18 = 32; |a| = sqrt(14); |b| = sqrt(77); 32 / sqrt(1078) ≈ 0.974632.
    expect(cosineSimilarity([1, 2, 3], [4, 5, 6])).toBeCloseTo(32 / Math.sqrt(14 * 77), 12);
  });

  it("cosineSimilarity - parallel, orthogonal and opposite vectors", () => {
    expect(cosineSimilarity([1, 0], [3, 0])).toBe(1);
    expect(cosineSimilarity([1, 0], [0, 2])).toBe(0);
    expect(cosineSimilarity([1, 1], [-1, -1])).toBeCloseTo(-1, 15);
  });

  it("cosineSimilarity - accepts Float32Array and mixed vector types", () => {
    const a = new Float32Array([0.1, 0.2, 0.3]);
    expect(cosineSimilarity(a, [0.1, 0.2, 0.3])).toBeCloseTo(1, 6);
    expect(cosineSimilarity(a, a)).toBeLessThanOrEqual(1);
  });

  it("cosineSimilarity - property: symmetric, within [-1, 1], scale invariant", () => {
    let seed = 7;
    const next = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
    for (let k = 0; k < 100; k++) {
      const a = Array.from({ length: 16 }, next);
      const b = Array.from({ length: 16 }, next);
      const ab = cosineSimilarity(a, b);
      expect(cosineSimilarity(b, a)).toBe(ab);
      expect(Math.abs(ab)).toBeLessThanOrEqual(1);
      expect(cosineSimilarity(a.map((x) => x * 1e3), b)).toBeCloseTo(ab, 12);
    }
  });

  it("cosineSimilarity - a zero vector gives 0 (no direction), including two empty vectors", () => {
    expect(cosineSimilarity([0, 0, 0], [1, 2, 3])).toBe(0);
    expect(cosineSimilarity([], [])).toBe(0);
  });

  it("cosineSimilarity - length mismatch, non-finite values and non-vectors throw", () => {
    expect(() => cosineSimilarity([1, 2], [1, 2, 3])).toThrow(/different lengths \(2 vs 3\)/);
    expect(() => cosineSimilarity([1, Number.NaN], [1, 2])).toThrow(RangeError);
    expect(() => cosineSimilarity("ab" as unknown as number[], [1, 2])).toThrow(TypeError);
  });
});
