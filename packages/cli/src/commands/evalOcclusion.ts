import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import type { AskEvent } from "@attr-rag/contracts";
import { APPROXIMATE_STRATEGIES, EXACT_STRATEGIES } from "@attr-rag/engine";
import { runAsk, Runtime } from "@attr-rag/gateway";
import { askRequestFromFlags, type AskFlags } from "../ask/askRequestFromFlags.js";
import { addApproximateOptions } from "../ask/strategyOptions.js";
import { CliError } from "../cliError.js";
import { occlusionOutcome, type OcclusionOutcome } from "../eval/occlusion/occlusionOutcome.js";
import { renderOcclusionReport } from "../eval/occlusion/occlusionReport.js";
import { compareWithExact, summarizeStrategy, type QuestionComparison, type StrategySummary } from "../eval/occlusion/occlusionSummary.js";
import { addConfigOptions, configFromOptions, gatewayErrorToCli } from "../gatewayCli.js";
import { positiveInt } from "../parseArgs.js";
import { progressBar } from "@attr-rag/telemetry";
import { abortOnSigint, EMBEDDED_KEYS } from "./ask.js";
import { loadQuestions } from "../eval/evalInputs.js";
import { formatDuration, ingestBenchmark } from "../eval/ingestBenchmark.js";
import { describeRun } from "@attr-rag/bench";

interface EvalOcclusionOptions extends AskFlags {
  questions: string;
  corpus?: string;
  strategies: string;
  limit?: string;
  json?: boolean;
  report?: string;
  store?: string;
  embedder?: string;
  [key: string]: unknown;
}

const APPROXIMATE = [...APPROXIMATE_STRATEGIES, "screen"] as readonly string[];
const ALL = [...EXACT_STRATEGIES, ...APPROXIMATE] as readonly string[];

function parseStrategies(list: string): { reference: string; approximate: string[] } {
  const names = list.split(",").map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !ALL.includes(n));
  if (unknown.length > 0) throw new CliError(`--strategies: unknown ${unknown.join(", ")}; use ${ALL.join(", ")}`, 2);
  const exact = names.filter((n) => !APPROXIMATE.includes(n));
  const approximate = names.filter((n) => APPROXIMATE.includes(n));
  if (exact.length !== 1) throw new CliError(`--strategies needs exactly one exact strategy as the reference (${EXACT_STRATEGIES.join(", ")}), got ${exact.length}`, 2);
  if (approximate.length === 0) throw new CliError(`--strategies needs at least one approximate strategy (${APPROXIMATE.join(", ")})`, 2);
  return { reference: exact[0]!, approximate: [...new Set(approximate)] };
}

export function formatOcclusionTable(reference: string, summaries: readonly StrategySummary[]): string {
  const lines = [
    `reference: ${reference} (exact)`,
    "strategy (APPROXIMATE)   questions  same selection  kept Jaccard  α Spearman  work ÷ exact  time ÷ exact  screened",
  ];
  for (const s of summaries) {
    lines.push(
      `${s.strategy.padEnd(24)} ${String(s.questions).padStart(9)}  ${`${(100 * s.selection_agreement).toFixed(0)} %`.padStart(14)}  ${s.mean_kept_jaccard.toFixed(3).padStart(12)}  ` +
        `${(s.mean_alpha_spearman === null ? "–" : s.mean_alpha_spearman.toFixed(3)).padStart(10)}  ${s.work_ratio.toFixed(3).padStart(12)}  ${s.time_ratio.toFixed(3).padStart(12)}  ` +
        `${(s.strategy === "screen" ? `${(100 * s.screened_fraction).toFixed(0)} %` : "–").padStart(8)}`,
    );
  }
  return lines.join("\n");
}

export function registerEvalOcclusionCommand(evalCmd: Command): void {
  const command = evalCmd
    .command("occlusion")
    .summary("how often the APPROXIMATE occlusion strategies agree with exact occlusion on your model and documents")
    .description(
      [
        "Runs every question of --questions through the whole pipeline (as `attr-rag ask`, embedded on --model over",
        "--store) once with the exact reference strategy and once per approximate strategy in --strategies, and",
        "compares each approximate run with the exact one: the same kept sets (selection agreement), the Jaccard",
        "index of the kept sets, Spearman's ρ of mean α per set, mean |Δα| per metric, and the occlusion stage's",
        "tokens evaluated and engine time relative to exact. Run it before trusting a faster mode. --corpus FILE",
        "first ingests a corpus.jsonl into --store (unchanged documents are not re-embedded). --report writes an",
        "HTML page with the table and a plot of agreement against work; --json prints {reference, strategies,",
        "questions} instead of the table.",
      ].join("\n"),
    )
    .requiredOption("--questions <file>", "questions.jsonl: {id?, question} per line (a benchmark's questions.jsonl works)")
    .option("--corpus <file>", "ingest this corpus.jsonl into --store first")
    .option("--strategies <list>", "one exact reference and the approximate strategies to compare", "speculative,kv-reuse,kv-mask,screen")
    .option("--limit <n>", "only the first N questions")
    .option("--k <n>", "chunks to retrieve (default 30)")
    .option("--mode <mode>", "retrieval: dense | bm25 | hybrid (default: the config's)")
    .option("--max-tokens <n>", "max new tokens per answer (default 512)")
    .option("--report <file.html>", "also write an HTML report with the agreement-against-work plot")
    .option("--json", "print the result as JSON");
  addConfigOptions(addApproximateOptions(command), EMBEDDED_KEYS).action(async (o: EvalOcclusionOptions) => {
    const started = performance.now();
    const run = describeRun();
    const { reference, approximate } = parseStrategies(o.strategies);
    const limit = o.limit !== undefined ? positiveInt("--limit", o.limit) : undefined;
    const questions = (await loadQuestions(o.questions)).slice(0, limit);
    if (questions.length === 0) throw new CliError(`--questions ${o.questions} has no questions`, 2);
    // The recompute windows belong to the approximate runs only, the screen flags to screen; the reference runs
    // exactly as `ask` would.
    const flagsFor = (strategy: string): AskFlags => {
      const { recomputeGap, recomputeTail, screenTopK, screenThreshold, screenRegenerate, ...rest } = o;
      const windows = { ...(recomputeGap !== undefined ? { recomputeGap } : {}), ...(recomputeTail !== undefined ? { recomputeTail } : {}) };
      const screen = { ...(screenTopK !== undefined ? { screenTopK } : {}), ...(screenThreshold !== undefined ? { screenThreshold } : {}), ...(screenRegenerate !== undefined ? { screenRegenerate } : {}) };
      if (strategy === "screen") return { ...rest, ...windows, ...screen, strategy };
      return APPROXIMATE.includes(strategy) ? { ...rest, ...windows, strategy } : { ...rest, strategy };
    };
    // Flags are checked before the store or the model is opened.
    for (const s of [reference, ...approximate]) askRequestFromFlags(questions[0]!.question, flagsFor(s));
    const config = configFromOptions(o, EMBEDDED_KEYS);
    const log = (line: string) => process.stderr.write(`${line}\n`);
    if (o.corpus !== undefined) await ingestBenchmark(config.store, config.embedder, o.corpus);
    const runtime = await Runtime.open(config, log).catch((err: unknown) => {
      throw gatewayErrorToCli(err);
    });
    const controller = new AbortController();
    const stop = abortOnSigint(controller);
    const bar = progressBar("eval occlusion");
    const comparisons: QuestionComparison[] = [];
    const failures: { question_id: string; strategy: string; error: string }[] = [];
    try {
      const total = questions.length * (1 + approximate.length);
      let done = 0;
      for (const [qi, q] of questions.entries()) {
        let current = reference;
        const once = async (strategy: string): Promise<OcclusionOutcome> => {
          current = strategy;
          const events: AskEvent[] = [];
          await runAsk(runtime, askRequestFromFlags(q.question, { ...flagsFor(strategy), requestId: `eval-occ-${q.id}-${strategy}` }), (e) => events.push(e), controller.signal);
          bar.update(++done, total, `${q.id} ${strategy}`);
          return occlusionOutcome(events);
        };
        try {
          const exact = await once(reference);
          for (const s of approximate) comparisons.push(compareWithExact(q.id, s, exact, await once(s)));
        } catch (err) {
          if (controller.signal.aborted) throw new CliError("interrupted", 130, { cause: err });
          const mapped = gatewayErrorToCli(err);
          const message = mapped instanceof Error ? mapped.message : String(mapped);
          failures.push({ question_id: q.id, strategy: current, error: message });
          log(`eval occlusion: question ${q.id}, ${current}: ${message} (question skipped)`);
          done = (qi + 1) * (1 + approximate.length);
        }
      }
      bar.done();
    } finally {
      stop();
      await runtime.dispose();
    }
    if (comparisons.length === 0) throw new CliError(`no question could be compared (${failures.length} failed; the first: ${failures[0]?.error ?? "?"})`, 1);
    const summaries = approximate.map((s) => summarizeStrategy(s, comparisons));
    const result = { reference, strategies: summaries, questions: comparisons, failures, run };
    if (o.report !== undefined) {
      const facts = {
        questions: `${new Set(comparisons.map((c) => c.question_id)).size} of ${questions.length} compared (${o.questions})`,
        model: String(config.model),
        store: config.store,
        "ran in": formatDuration(performance.now() - started),
      };
      try {
        writeFileSync(o.report, renderOcclusionReport(reference, summaries, facts));
      } catch (err) {
        throw new CliError(`--report: cannot write ${o.report}: ${(err as Error).message}`, 1, { cause: err });
      }
    }
    if (o.json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }
    console.log(formatOcclusionTable(reference, summaries));
    for (const s of summaries) {
      const d = Object.entries(s.mean_abs_delta_alpha).map(([m, v]) => `${m.replace("ATTRIBUTION_METRIC_", "").toLowerCase()} ${v.toFixed(3)}`).join(", ");
      console.log(`${s.strategy}: mean |Δα| ${d}`);
    }
    if (failures.length > 0) console.log(`${failures.length} question(s) failed and were skipped (see stderr)`);
  });
}
