/** Parameters of the `elbow` selection strategy (SPEC section 2). */
export interface SelectionOptions {
  /** A metric's largest drop must exceed this for the sets above it to count as "selected by" the metric. */
  tau?: number;
  /** Metrics that must select a set (besides S*) for it to be kept. */
  minVotes?: number;
  /** Below this α on every metric for every set, the model is taken to have ignored the context. */
  epsilon?: number;
  /** At most this many sets are kept (S* first, then by votes, mean α, re-rank order). */
  maxSets?: number;
  /** Optional cap on the sum of `tokens` of kept sets; S* is always kept. */
  tokenBudget?: number;
}

export const DEFAULT_SELECTION_OPTIONS = {
  tau: 0.05,
  minVotes: 3,
  epsilon: 0.01,
  maxSets: Number.POSITIVE_INFINITY,
  tokenBudget: Number.POSITIVE_INFINITY,
} as const satisfies Required<SelectionOptions>;

/** Values at most this far apart count as equal when comparing α (floating-point noise, not signal). */
export const ALPHA_TIE_TOLERANCE = 1e-12;
