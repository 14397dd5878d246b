// The run behind `attr-rag eval attribution`: coalition methods against exact Shapley on the synthetic
// relationship sets (RQ1: rank agreement; RQ2: precision@k against the exhaustive top k).
import { buildPromptSegments, coalitionOfMask } from "@attr-rag/core";
import type { BenchRun } from "@attr-rag/bench";
import { loadModelArg } from "@attr-rag/engine";
import { progressBar } from "@attr-rag/telemetry";
import { EVAL_METHODS, evaluateExample, type MethodOutcome } from "./attributionEval.js";
import { relationshipSets, type RelationshipKind } from "./relationshipSets.js";

export interface AttributionMethodSummary {
  spearman: number | null;
  kendall: number | null;
  /** Examples where the correlation was defined (neither ranking constant). */
  correlated_examples: number;
  precision_at: Record<string, number>;
  utility_calls: number;
  positives_top2: number;
}

const mean = (xs: readonly number[]) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

export function summarise(outcomes: readonly Record<string, MethodOutcome>[], kMax: number): Record<string, AttributionMethodSummary> {
  return Object.fromEntries(
    EVAL_METHODS.map((m) => {
      const rows = outcomes.map((o) => o[m]!);
      const defined = rows.filter((r) => !Number.isNaN(r.spearman) && !Number.isNaN(r.kendall));
      const ks = Array.from({ length: kMax }, (_, i) => i + 1).filter((k) => rows.every((r) => r.precisionAt.length >= k));
      return [
        m,
        {
          spearman: mean(defined.map((r) => r.spearman)),
          kendall: mean(defined.map((r) => r.kendall)),
          correlated_examples: defined.length,
          precision_at: Object.fromEntries(ks.map((k) => [String(k), mean(rows.map((r) => r.precisionAt[k - 1]!))!])),
          utility_calls: mean(rows.map((r) => r.utilityCalls))!,
          positives_top2: mean(rows.map((r) => (r.positivesTop2 ? 1 : 0)))!,
        },
      ];
    }),
  );
}

export interface AttributionEvalOptions {
  readonly modelArg: string;
  readonly kind: RelationshipKind | "mixed";
  readonly count: number;
  readonly seed: number;
  readonly samples: number;
  readonly negatives: number;
  readonly kMax: number;
  readonly threads?: number | undefined;
  readonly run: BenchRun;
}

export async function runAttributionEval(o: AttributionEvalOptions) {
  const { modelArg, kind, count, seed, samples, negatives, kMax, run } = o;
  const examples = relationshipSets(kind, count, seed, negatives);
  const model = await loadModelArg(modelArg);
  try {
    const ctx = await model.createContext({ contextSize: 16 * 1024, sequences: 16, kvType: "f32", ...(o.threads ? { threads: o.threads } : {}) });
    const bar = progressBar("eval attribution");
    const outcomes: Record<string, MethodOutcome>[] = [];
    const engine = { coalitions_scored: 0, tokens_evaluated: 0, wall_ms: 0 };
    for (const [i, ex] of examples.entries()) {
      const n = ex.passages.length;
      const segments = model.tokenizeSegments(buildPromptSegments({ question: ex.question, sets: ex.passages.map((p) => p.text) }, model.chatTemplate()));
      const continuation = model.tokenize(ex.answer, { addSpecial: false, parseSpecial: false });
      const coalitions = Array.from({ length: 1 << n }, (_, mask) => coalitionOfMask(mask, n));
      const t0 = performance.now();
      const scored = await ctx.scoreContinuations({ segments, continuation, coalitions });
      engine.wall_ms += performance.now() - t0;
      engine.coalitions_scored += coalitions.length;
      engine.tokens_evaluated += scored.counters.tokensEvaluated;
      const positives = ex.passages.flatMap((p, j) => (p.role === "positive" ? [j] : []));
      outcomes.push(await evaluateExample(n, scored.totals, positives, { samples, seed, kMax }));
      bar.update(i + 1, examples.length, ex.kind);
    }
    bar.done();
    const report = {
      bench: "eval attribution",
      model: modelArg,
      kind,
      examples: count,
      sets_per_example: 2 + negatives,
      seed,
      samples,
      methods: summarise(outcomes, kMax),
      engine,
      run,
    };
    return report;
  } finally {
    await model.dispose();
  }
}

export type AttributionEvalReport = Awaited<ReturnType<typeof runAttributionEval>>;

/** The report as `eval attribution` prints it without --json. */
export function attributionEvalText(report: AttributionEvalReport): string[] {
  const ks = Object.keys(report.methods.shapley!.precision_at);
  const lines = [
    `${report.model}: ${report.examples} ${report.kind} examples of ${report.sets_per_example} passages, ${report.samples} samples for the sampling methods`,
    `method          Spearman  Kendall  ${ks.map((k) => `P@${k}`.padStart(5)).join(" ")}  calls  positives top-2`,
  ];
  for (const [m, s] of Object.entries(report.methods)) {
    const f = (x: number | null) => (x === null ? "–" : x.toFixed(2)).padStart(8);
    lines.push(`${m.padEnd(14)} ${f(s.spearman)} ${f(s.kendall)}  ${ks.map((k) => s.precision_at[k]!.toFixed(2).padStart(5)).join(" ")}  ${s.utility_calls.toFixed(0).padStart(5)}  ${(s.positives_top2 * 100).toFixed(0)} %`);
  }
  return lines;
}
