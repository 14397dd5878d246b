// Cosine similarity of two embedding vectors, used for the "cosine" attribution metric
// (sentence embeddings of A_full and A_-j).

import { describeValue } from "./validate.js";

/** A number[] , Float32Array, Float64Array or any other array-like of numbers. */
export type NumericVector = ArrayLike<number>;

function isVector(value: unknown): value is NumericVector {
  return typeof value === "object" && value !== null && typeof (value as { length?: unknown }).length === "number";
}

/**
 * cos(a, b) = a·b / (|a| |b|), accumulated in float64 and clamped to [-1, 1] (rounding can
 * push the ratio of two nearly parallel vectors slightly past 1).
 *
 * A zero vector has no direction, so the cosine is undefined; we return 0 ("no similarity")
 * rather than NaN, because NaN would poison the attribution scores α = 1 − sim downstream, and
 * an embedding model only returns a zero vector for degenerate input (e.g. empty text).
 *
 * @throws TypeError if an argument is not an array-like (number[], Float32Array, ...).
 * @throws RangeError if the lengths differ or an element is NaN or infinite.
 */
export function cosineSimilarity(a: NumericVector, b: NumericVector): number {
  if (!isVector(a) || !isVector(b)) {
    throw new TypeError(
      `cosineSimilarity expects two number arrays or typed arrays (e.g. Float32Array), got ${describeValue(a)} and ${describeValue(b)}.`,
    );
  }
  if (a.length !== b.length) {
    throw new RangeError(
      `cosineSimilarity: vectors have different lengths (${a.length} vs ${b.length}); ` +
        "compare embeddings produced by the same model.",
    );
  }
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      throw new RangeError(
        `cosineSimilarity: element ${i} is not a finite number (${String(x)}, ${String(y)}); check the embedding output.`,
      );
    }
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  if (normA === 0 || normB === 0) return 0;
  // Two square roots instead of sqrt(normA * normB) so the product cannot overflow.
  const cosine = dot / (Math.sqrt(normA) * Math.sqrt(normB));
  return Math.min(1, Math.max(-1, cosine));
}
