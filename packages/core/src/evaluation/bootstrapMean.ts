// Confidence intervals for Table I's per-method means. Percentile bootstrap: it assumes nothing about the
// metric's distribution (ROUGE and BLEU pile up near 0 with weak models), and a seed makes it repeatable.
import { SeededRandom } from "../coalitions/seededRandom.js";

export interface MeanWithCi {
  readonly mean: number;
  /** Lower and upper bounds of the percentile interval; equal to the mean when n = 1. */
  readonly low: number;
  readonly high: number;
  readonly n: number;
}

export interface BootstrapOptions {
  /** Resamples; default 2,000. */
  readonly resamples?: number;
  /** Default 0.95. */
  readonly confidence?: number;
  /** Default 0. */
  readonly seed?: number;
}

/** The q-quantile of ascending `sorted` with linear interpolation between order statistics (numpy's default). */
export function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) throw new RangeError("quantileSorted: no values");
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * Mean of `values` and its percentile-bootstrap interval: `resamples` times, draw n values with replacement
 * (indices from SeededRandom(seed).below(n), resample after resample) and take their mean; the bounds are the
 * (1 − confidence)/2 and (1 + confidence)/2 quantiles of those means.
 */
export function bootstrapMean(values: readonly number[], options: BootstrapOptions = {}): MeanWithCi {
  const n = values.length;
  if (n === 0) throw new RangeError("bootstrapMean: no values");
  if (values.some((v) => !Number.isFinite(v))) throw new RangeError("bootstrapMean: every value must be a finite number");
  const resamples = options.resamples ?? 2000;
  const confidence = options.confidence ?? 0.95;
  if (!Number.isInteger(resamples) || resamples < 1) throw new RangeError(`bootstrapMean: resamples must be an integer ≥ 1, got ${resamples}`);
  if (!(confidence > 0 && confidence < 1)) throw new RangeError(`bootstrapMean: confidence must be in (0, 1), got ${confidence}`);
  const mean = values.reduce((a, b) => a + b, 0) / n;
  if (n === 1) return { mean, low: mean, high: mean, n };
  const rng = new SeededRandom(options.seed ?? 0);
  const means = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += values[rng.below(n)]!;
    means[b] = sum / n;
  }
  const sorted = Array.from(means).sort((a, b) => a - b);
  return { mean, low: quantileSorted(sorted, (1 - confidence) / 2), high: quantileSorted(sorted, (1 + confidence) / 2), n };
}
