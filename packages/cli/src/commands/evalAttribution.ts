import type { Command } from "commander";
import { buildPromptSegments, coalitionOfMask, MAX_SAMPLES } from "@attr-rag/core";
import { defaultModelPath } from "@attr-rag/engine";
import { CliError } from "../cliError.js";
import { loadModelArg } from "../modelCli.js";
import { positiveInt } from "../parseArgs.js";
import { progressBar } from "@attr-rag/telemetry";
import { EVAL_METHODS, evaluateExample, type MethodOutcome } from "../eval/attributionEval.js";
import { RELATIONSHIP_KINDS, relationshipSets, type RelationshipKind } from "../eval/relationshipSets.js";
import { describeRun } from "@attr-rag/bench";

interface EvalAttributionFlags {
  sets: string;
  kind: string;
  seed: string;
  samples: string;
  negatives: string;
  kMax: string;
  model?: string;
  threads?: string;
  json?: boolean;
}

interface MethodSummary {
  spearman: number | null;
  kendall: number | null;
  /** Examples where the correlation was defined (neither ranking constant). */
  correlated_examples: number;
  precision_at: Record<string, number>;
  utility_calls: number;
  positives_top2: number;
}

const mean = (xs: readonly number[]) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

export function summarise(outcomes: readonly Record<string, MethodOutcome>[], kMax: number): Record<string, MethodSummary> {
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

/** `attr-rag eval attribution`: RQ1 (rank agreement with exact Shapley) and RQ2 (precision@k) per method. */
export function registerEvalAttributionCommand(evalCmd: Command): void {
  evalCmd
    .command("attribution")
    .summary("coalition methods against exact Shapley on synthetic redundancy / complementarity / synergy sets")
    .description(
      [
        "Generates --sets examples of --kind (two positive passages related that way, --negatives negatives, a target",
        "answer; see packages/cli/src/eval/relationshipSets.ts), scores v(C) = log P(answer | question, C) for all",
        "2^n coalitions of each with the model (one batched pass per example), then runs every method on those values:",
        "RQ1 = Spearman and Kendall of each method's scores against exact Shapley's; RQ2 = precision@k of its top k",
        "against the k sets whose removal drops v the most (exhaustive); utility calls per method; positives_top2 =",
        "how often both positive passages are the method's top two. Progress goes to stderr. With --json, one line.",
      ].join("\n"),
    )
    .option("--sets <n>", "examples to generate", "12")
    .option("--kind <kind>", `${RELATIONSHIP_KINDS.join(" | ")} | mixed`, "mixed")
    .option("--seed <n>", "seed of the generator and of the sampling methods", "0")
    .option("--samples <n>", "budget of the sampling methods", "32")
    .option("--negatives <n>", "negative passages per example (1-4)", "4")
    .option("--k-max <n>", "largest k of precision@k", "3")
    .option("--model <path|name>", "GGUF model (default: $ATTR_RAG_MODEL or the shipped stories260K)")
    .option("--threads <n>", "CPU threads (default: all)")
    .option("--json", "print the report as one JSON line")
    .action(async (o: EvalAttributionFlags) => {
      const run = describeRun();
      const count = positiveInt("--sets", o.sets);
      if (count > 10_000) throw new CliError(`--sets must be at most 10000, got ${count}`);
      const kind = o.kind as RelationshipKind | "mixed";
      if (kind !== "mixed" && !RELATIONSHIP_KINDS.includes(kind)) throw new CliError(`--kind must be one of ${RELATIONSHIP_KINDS.join(", ")}, mixed; got "${o.kind}"`);
      const seed = Number(o.seed);
      if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new CliError(`--seed must be an integer in [0, 4294967295], got "${o.seed}"`);
      const samples = positiveInt("--samples", o.samples);
      if (samples > MAX_SAMPLES) throw new CliError(`--samples must be at most ${MAX_SAMPLES}, got ${samples}`);
      const negatives = positiveInt("--negatives", o.negatives);
      if (negatives > 4) throw new CliError(`--negatives must be 1..4, got ${negatives}`);
      const kMax = positiveInt("--k-max", o.kMax);
      const examples = relationshipSets(kind, count, seed, negatives);
      const modelArg = o.model ?? defaultModelPath();
      const model = await loadModelArg(modelArg);
      try {
        const ctx = await model.createContext({ contextSize: 16 * 1024, sequences: 16, kvType: "f32", ...(o.threads ? { threads: positiveInt("--threads", o.threads) } : {}) });
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
        if (o.json) {
          process.stdout.write(`${JSON.stringify(report)}\n`);
          return;
        }
        const ks = Object.keys(report.methods.shapley!.precision_at);
        console.log(`${modelArg}: ${count} ${kind} examples of ${2 + negatives} passages, ${samples} samples for the sampling methods`);
        console.log(`method          Spearman  Kendall  ${ks.map((k) => `P@${k}`.padStart(5)).join(" ")}  calls  positives top-2`);
        for (const [m, s] of Object.entries(report.methods)) {
          const f = (x: number | null) => (x === null ? "–" : x.toFixed(2)).padStart(8);
          console.log(`${m.padEnd(14)} ${f(s.spearman)} ${f(s.kendall)}  ${ks.map((k) => s.precision_at[k]!.toFixed(2).padStart(5)).join(" ")}  ${s.utility_calls.toFixed(0).padStart(5)}  ${(s.positives_top2 * 100).toFixed(0)} %`);
        }
      } finally {
        await model.dispose();
      }
    });
}
