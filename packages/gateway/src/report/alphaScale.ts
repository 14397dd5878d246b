// The α axis. Metrics are not on one scale: 1 - cosine can reach 2, and log-likelihood α is in nats and may be
// negative, so the axis always covers 0..1 (the range of the ROUGE-family metrics) and grows to fit the data.

export interface AlphaScale {
  readonly min: number;
  readonly max: number;
  readonly step: number;
  readonly ticks: readonly number[];
  /** Decimals that distinguish adjacent ticks. */
  readonly tickDecimals: number;
}

/** 1, 2 or 5 times a power of ten: tick labels people can read at a glance. */
function niceStep(rough: number): number {
  const power = 10 ** Math.floor(Math.log10(rough));
  const f = rough / power;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power;
}

export function alphaScale(alphas: readonly number[], targetTicks = 5): AlphaScale {
  const finite = alphas.filter(Number.isFinite);
  const min = Math.min(0, ...finite);
  const max = Math.max(1, ...finite);
  const step = niceStep((max - min) / targetTicks);
  // The axis ends at the data, not at the next tick: a rounding-noise α of -0.0004 must not add half a
  // unit of empty axis below zero. Ticks are the multiples of the step inside the range, so 0 is always one.
  const slack = step * 1e-9;
  const ticks: number[] = [];
  // Multiplying integers by the step (instead of adding it repeatedly) keeps 0.1-steps free of drift.
  for (let i = Math.ceil((min - slack) / step); i * step <= max + slack; i++) ticks.push(i * step);
  return { min, max, step, ticks, tickDecimals: Math.max(0, -Math.floor(Math.log10(step))) };
}
