// summary.json and the Table-I-shaped text: per-method means with 95 % bootstrap intervals, the best method
// per metric, majority-of-metrics wins per question, and the judge's criteria (missing scores counted apart).
import { ANSWER_METRICS, bootstrapMean, JUDGE_CRITERIA, majorityWinners, type AnswerMetric, type JudgeCriterion, type MeanWithCi } from "@attr-rag/core";
import type { AnswerRow } from "./answerRows.js";

export interface JudgeSummary {
  /** Per criterion: mean of the scores read (with CI) and how many replies lacked it. */
  readonly criteria: Record<JudgeCriterion, { readonly score: MeanWithCi | null; readonly missing: number }>;
  /** Mean total /30 over the rows with all six criteria. */
  readonly total: MeanWithCi | null;
  readonly judged: number;
  /** Rows where at least one criterion is missing. */
  readonly incomplete: number;
  /** Rows that needed the retry. */
  readonly retried: number;
}

export interface MethodSummary {
  readonly questions: number;
  readonly metrics: Record<AnswerMetric, MeanWithCi>;
  /** Questions this method won by majority of metrics (among the questions every method answered). */
  readonly wins: number;
  readonly judge?: JudgeSummary;
  /** Mean wall time of the method's Ask, ms. */
  readonly mean_ms: number;
}

export interface AnswersSummary {
  readonly methods: Record<string, MethodSummary>;
  /** Metric → method(s) with the highest mean. */
  readonly best: Record<AnswerMetric, string[]>;
  /** Questions answered by every method: the ones wins are counted over. */
  readonly compared_questions: number;
  readonly bootstrap: { readonly resamples: number; readonly confidence: number; readonly seed: number };
}

/** Summarises rows of the given methods (in that order); a method with no rows is left out. */
export function summarizeAnswers(rows: readonly AnswerRow[], methods: readonly string[], seed: number, resamples = 2000): AnswersSummary {
  const byMethod = new Map<string, AnswerRow[]>(methods.map((m) => [m, []]));
  for (const r of rows) byMethod.get(r.method)?.push(r);
  const present = methods.filter((m) => byMethod.get(m)!.length > 0);
  const ci = (values: number[]) => bootstrapMean(values, { resamples, seed });

  const byQuestion = new Map<string, Map<string, AnswerRow>>();
  for (const m of present) for (const r of byMethod.get(m)!) (byQuestion.get(r.question_id) ?? byQuestion.set(r.question_id, new Map()).get(r.question_id)!).set(m, r);
  const wins = new Map<string, number>(present.map((m) => [m, 0]));
  let compared = 0;
  for (const perMethod of byQuestion.values()) {
    if (perMethod.size !== present.length || present.length < 2) continue;
    compared++;
    const scores = Object.fromEntries(present.map((m) => [m, perMethod.get(m)!.metrics]));
    for (const w of majorityWinners(scores, ANSWER_METRICS).winners) wins.set(w, wins.get(w)! + 1);
  }

  const summaries: Record<string, MethodSummary> = {};
  for (const m of present) {
    const rs = byMethod.get(m)!;
    const metrics = Object.fromEntries(ANSWER_METRICS.map((metric) => [metric, ci(rs.map((r) => r.metrics[metric]))])) as Record<AnswerMetric, MeanWithCi>;
    const judged = rs.filter((r) => r.judge !== undefined);
    summaries[m] = {
      questions: rs.length,
      metrics,
      wins: wins.get(m)!,
      mean_ms: rs.reduce((s, r) => s + (r.timings["harness_ms"] ?? 0), 0) / rs.length,
      ...(judged.length > 0 ? { judge: judgeSummary(judged, ci) } : {}),
    };
  }
  const best = Object.fromEntries(
    ANSWER_METRICS.map((metric) => {
      const top = Math.max(...present.map((m) => summaries[m]!.metrics[metric].mean));
      return [metric, present.filter((m) => top - summaries[m]!.metrics[metric].mean <= 1e-12)];
    }),
  ) as Record<AnswerMetric, string[]>;
  return { methods: summaries, best, compared_questions: compared, bootstrap: { resamples, confidence: 0.95, seed } };
}

function judgeSummary(rows: readonly AnswerRow[], ci: (v: number[]) => MeanWithCi): JudgeSummary {
  const criteria = Object.fromEntries(
    JUDGE_CRITERIA.map((c) => {
      const values = rows.map((r) => r.judge!.scores[c]).filter((v): v is number => v !== undefined);
      return [c, { score: values.length > 0 ? ci(values) : null, missing: rows.length - values.length }];
    }),
  ) as JudgeSummary["criteria"];
  const totals = rows.map((r) => r.judge!.total).filter((t): t is number => t !== null);
  return {
    criteria,
    total: totals.length > 0 ? ci(totals) : null,
    judged: rows.length,
    incomplete: rows.filter((r) => r.judge!.missing.length > 0).length,
    retried: rows.filter((r) => r.judge!.attempts > 1).length,
  };
}

const METRIC_LABEL: Record<AnswerMetric, string> = {
  cosine: "Cosine",
  bleu: "BLEU",
  jaccard: "Jaccard",
  rouge1: "ROUGE-1 F1",
  rouge2: "ROUGE-2 F1",
  rougeL: "ROUGE-L F1",
  rougeLsum: "ROUGE-Lsum F1",
};
export const metricLabel = (m: AnswerMetric) => METRIC_LABEL[m];

/** Table I as text: a row per metric, a column per method, `*` on the best mean, then wins and the judge. */
export function formatAnswersTable(summary: AnswersSummary): string {
  const methods = Object.keys(summary.methods);
  const cell = (x: MeanWithCi) => `${x.mean.toFixed(3)} [${x.low.toFixed(3)}, ${x.high.toFixed(3)}]`;
  const rows: string[][] = [["metric", ...methods]];
  for (const metric of ANSWER_METRICS) {
    rows.push([METRIC_LABEL[metric], ...methods.map((m) => `${summary.best[metric].includes(m) ? "*" : " "}${cell(summary.methods[m]!.metrics[metric])}`)]);
  }
  rows.push([`wins (of ${summary.compared_questions})`, ...methods.map((m) => ` ${summary.methods[m]!.wins}`)]);
  rows.push(["questions", ...methods.map((m) => ` ${summary.methods[m]!.questions}`)]);
  if (methods.some((m) => summary.methods[m]!.judge)) {
    for (const c of JUDGE_CRITERIA) {
      rows.push([`judge ${c} /5`, ...methods.map((m) => ` ${judgeCell(summary.methods[m]!.judge?.criteria[c].score ?? null, summary.methods[m]!.judge?.criteria[c].missing ?? 0)}`)]);
    }
    rows.push(["judge total /30", ...methods.map((m) => ` ${judgeCell(summary.methods[m]!.judge?.total ?? null, summary.methods[m]!.judge?.incomplete ?? 0)}`)]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
  return [
    ...lines,
    `* best mean per metric; [low, high] = ${summary.bootstrap.confidence * 100} % bootstrap interval (${summary.bootstrap.resamples} resamples, seed ${summary.bootstrap.seed}); wins = questions where a method is best on a majority of the ${ANSWER_METRICS.length} metrics`,
    "",
  ].join("\n");
}

function judgeCell(x: MeanWithCi | null, missing: number): string {
  const value = x === null ? "–" : x.mean.toFixed(2);
  return missing > 0 ? `${value} (${missing} missing)` : value;
}
