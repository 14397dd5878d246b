import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { describeRun } from "@attr-rag/bench";
import { InputError, positiveInt } from "@attr-rag/core";
import {
  APPROXIMATE_EVAL_STRATEGIES,
  compareStrategies,
  formatDuration,
  ingestBenchmark,
  loadQuestions,
  occlusionEvalText,
  parseStrategies,
  renderOcclusionReport,
  summarizeStrategy,
} from "@attr-rag/eval";
import { runAsk, Runtime } from "@attr-rag/gateway";
import { askRequestFromFlags, type AskFlags } from "../ask/askRequestFromFlags.js";
import { addApproximateOptions } from "../ask/strategyOptions.js";
import { addConfigOptions, configFromOptions, gatewayErrorToCli } from "../gatewayCli.js";
import { abortOnSigint, EMBEDDED_KEYS } from "./ask.js";

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
    if (questions.length === 0) throw new InputError(`--questions ${o.questions} has no questions`, 2);
    // The recompute windows belong to the approximate runs only, the screen flags to screen; the reference runs
    // exactly as `ask` would.
    const flagsFor = (strategy: string): AskFlags => {
      const { recomputeGap, recomputeTail, screenTopK, screenThreshold, screenRegenerate, ...rest } = o;
      const windows = { ...(recomputeGap !== undefined ? { recomputeGap } : {}), ...(recomputeTail !== undefined ? { recomputeTail } : {}) };
      const screen = { ...(screenTopK !== undefined ? { screenTopK } : {}), ...(screenThreshold !== undefined ? { screenThreshold } : {}), ...(screenRegenerate !== undefined ? { screenRegenerate } : {}) };
      if (strategy === "screen") return { ...rest, ...windows, ...screen, strategy };
      return APPROXIMATE_EVAL_STRATEGIES.includes(strategy) ? { ...rest, ...windows, strategy } : { ...rest, strategy };
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
    let compared: Awaited<ReturnType<typeof compareStrategies>>;
    try {
      compared = await compareStrategies({
        questions,
        reference,
        approximate,
        request: (strategy, q, requestId) => askRequestFromFlags(q.question, { ...flagsFor(strategy), requestId }),
        ask: (request, onEvent, signal) => runAsk(runtime, request, onEvent, signal),
        describeError: (err) => {
          const mapped = gatewayErrorToCli(err);
          return mapped instanceof Error ? mapped.message : String(mapped);
        },
        log,
        signal: controller.signal,
      });
    } finally {
      stop();
      await runtime.dispose();
    }
    const { comparisons, failures } = compared;
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
        throw new InputError(`--report: cannot write ${o.report}: ${(err as Error).message}`, 1, { cause: err });
      }
    }
    process.stdout.write(o.json ? `${JSON.stringify(result)}\n` : `${occlusionEvalText(reference, summaries, failures).join("\n")}\n`);
  });
}
