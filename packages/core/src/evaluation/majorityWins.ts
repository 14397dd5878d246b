// The paper's "Attr-RAG wins 9 of 10 tasks": a method wins a question when it is best on a majority of the
// metrics. Ties on a metric count for every tied method, so identical answers can both win.

/** Scores of one question: method → metric → value. Every method must have every metric. */
export type QuestionScores = Readonly<Record<string, Readonly<Record<string, number>>>>;

export interface MajorityResult {
  /** Methods that won this question (best on more than half of the metrics). */
  readonly winners: string[];
  /** Metric → the method(s) with the highest value. */
  readonly bestPerMetric: Record<string, string[]>;
}

/** Values this close count as a tie (metrics are computed in float64 from the same texts). */
export const WIN_TIE_TOLERANCE = 1e-12;

export function majorityWinners(scores: QuestionScores, metrics: readonly string[]): MajorityResult {
  const methods = Object.keys(scores);
  if (methods.length === 0) throw new RangeError("majorityWinners: no methods");
  if (metrics.length === 0) throw new RangeError("majorityWinners: no metrics");
  const bestPerMetric: Record<string, string[]> = {};
  const won = new Map<string, number>(methods.map((m) => [m, 0]));
  for (const metric of metrics) {
    const values = methods.map((m) => {
      const v = scores[m]![metric];
      if (typeof v !== "number" || Number.isNaN(v)) throw new RangeError(`majorityWinners: method "${m}" has no value for "${metric}"`);
      return v;
    });
    const best = Math.max(...values);
    bestPerMetric[metric] = methods.filter((_, i) => best - values[i]! <= WIN_TIE_TOLERANCE);
    for (const m of bestPerMetric[metric]) won.set(m, won.get(m)! + 1);
  }
  return { winners: methods.filter((m) => won.get(m)! * 2 > metrics.length), bestPerMetric };
}
