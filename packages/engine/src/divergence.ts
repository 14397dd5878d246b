/** Where a run's answer first differs from the reference run's answer, and how close that step was to a tie. */
export interface Divergence {
  /** Index of the sequence (0 = A_full, j + 1 = j-th occluded answer). */
  seq: number;
  /** First step (0-based token index) where the tokens differ. */
  step: number;
  /** The reference run's top-1 minus top-2 logit at that step. */
  referenceMargin: number;
}

export interface SequenceLike {
  tokens: Int32Array;
  margins: Float32Array;
}

export interface Comparison {
  identical: number;
  total: number;
  divergences: Divergence[];
}

/** Compares sequences token by token (an answer that ends earlier differs where the other goes on). */
export function compareSequences(reference: readonly SequenceLike[], candidate: readonly SequenceLike[]): Comparison {
  if (reference.length !== candidate.length) throw new RangeError(`compareSequences: ${reference.length} reference vs ${candidate.length} candidate sequences`);
  const divergences: Divergence[] = [];
  reference.forEach((ref, seq) => {
    const cand = candidate[seq]!;
    const n = Math.max(ref.tokens.length, cand.tokens.length);
    for (let step = 0; step < n; step++) {
      if (ref.tokens[step] !== cand.tokens[step]) {
        divergences.push({ seq, step, referenceMargin: ref.margins[step] ?? Number.NaN });
        return;
      }
    }
  });
  return { identical: reference.length - divergences.length, total: reference.length, divergences };
}
