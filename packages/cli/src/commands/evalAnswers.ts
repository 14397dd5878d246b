import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { Command } from "commander";
import type { AskEvent, AskRequest } from "@attr-rag/contracts";
import { InputError, scoreAnswer } from "@attr-rag/core";
import { remoteAsk, runAsk, Runtime, type GatewayConfig } from "@attr-rag/gateway";
import type { Embedder } from "@attr-rag/index";
import type { AskFlags } from "../ask/askRequestFromFlags.js";

import { CliError } from "../cliError.js";
import { parseAnswerMethods, DEFAULT_ANSWER_METHODS, requestFor } from "../eval/answers/answerMethods.js";
import { readRows, rowKey, RowWriter, type AnswerRow } from "../eval/answers/answerRows.js";
import { renderAnswersReport } from "../eval/answers/answersReport.js";
import { formatAnswersTable, summarizeAnswers } from "../eval/answers/answersSummary.js";
import { askOutcome } from "../eval/answers/askOutcome.js";
import { loadBenchmark } from "../eval/answers/benchmark.js";
import { httpJudge, judgeAnswer, localJudge, type Judge } from "../eval/answers/judges.js";
import { retrievalDiagnostics, type RetrievalDiagnostics } from "../eval/answers/retrievalDiagnostics.js";
import { addConfigOptions, configFromOptions, gatewayErrorToCli } from "../gatewayCli.js";
import { positiveInt } from "../parseArgs.js";
import { progressBar } from "@attr-rag/telemetry";
import { startEmbedder, storeErrorToCli } from "../storeCli.js";
import { abortOnSigint, EMBEDDED_KEYS } from "./ask.js";
import { formatDuration, ingestBenchmark } from "../eval/ingestBenchmark.js";
import { addStrategyOptions } from "../ask/strategyOptions.js";
import { describeRun } from "@attr-rag/bench";

interface EvalAnswersOptions extends AskFlags, Record<string, unknown> {
  benchmark: string;
  methods: string;
  limit?: string;
  server?: string;
  token?: string;
  tlsCa?: string;
  timeout?: string;
  out?: string;
  resume?: boolean;
  judge?: string;
  judgeUrl?: string;
  judgeModel?: string;
  judgeKeyEnv?: string;
  judgeContext: string;
  report?: string;
  json?: boolean;
  seed: string;
  store?: string;
  model?: string;
  embedder?: string;
}

/** A run stops after this many Asks in a row failed: something is wrong with the setup, not one question. */
export const MAX_CONSECUTIVE_FAILURES = 5;

type AskFunction = (request: AskRequest, onEvent: (e: AskEvent) => void, signal: AbortSignal) => Promise<void>;


/**
 * What must match for --resume to continue a run: rows made under other settings would be mixed silently.
 * Embedded, the resolved configuration counts (flags, --config file and ATTR_RAG_* alike); threads and GPU
 * layers do not change greedy answers and are left out.
 */
function runSettings(o: EvalAnswersOptions, benchmarkDir: string, methods: readonly string[], judge: Judge | undefined, config: GatewayConfig | undefined): Record<string, unknown> {
  const ask: Record<string, unknown> = {};
  for (const key of ["k", "mode", "maxTokens", "strategy", "recomputeGap", "recomputeTail", "screenTopK", "screenThreshold", "screenRegenerate", "metrics", "tau", "minVotes", "epsilon", "maxSets", "maxGap", "method", "samples", "betaAlpha", "betaBeta"] as const) {
    if (o[key] !== undefined) ask[key] = o[key];
  }
  const engine: Record<string, unknown> = {};
  if (config !== undefined) {
    for (const key of ["store", "model", "embedder", "reranker", "k", "retrievalMode", "strategy", "maxTokens", "contextSize", "sequences", "batchSize", "metrics", "tau", "minVotes", "epsilon", "maxGap", "maxSets"] as const) {
      if (config[key] !== undefined) engine[key] = config[key];
    }
  }
  return {
    benchmark: resolve(benchmarkDir),
    target: o.server !== undefined ? `server ${o.server}` : `model ${config!.model}`,
    methods,
    ask,
    engine,
    seed: o.seed,
    judge: judge?.id ?? null,
  };
}

function checkResume(path: string, settings: Record<string, unknown>): void {
  let previous: Record<string, unknown>;
  try {
    previous = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  } catch (err) {
    throw new CliError(`--resume: cannot read ${path} (${(err as Error).message}); it records the settings of the run to continue`, 2, { cause: err });
  }
  const differ = Object.keys(settings).filter((k) => JSON.stringify(previous[k]) !== JSON.stringify(settings[k]));
  if (differ.length > 0) {
    const what = differ.map((k) => `${k}: was ${JSON.stringify(previous[k])}, now ${JSON.stringify(settings[k])}`).join("; ");
    throw new CliError(`--resume: the settings differ from the run in ${path} (${what}); use the same flags, or another --out for a new run`, 2);
  }
}

async function openJudge(o: EvalAnswersOptions, config: GatewayConfig | undefined): Promise<Judge | undefined> {
  if (o.judge !== undefined && o.judgeUrl !== undefined) throw new CliError("--judge (a local GGUF) and --judge-url (an HTTP endpoint) exclude each other; pick one", 2);
  if (o.judgeUrl !== undefined) {
    if (o.judgeModel === undefined) throw new CliError("--judge-url needs --judge-model (the model name the endpoint serves)", 2);
    return httpJudge(o.judgeUrl, o.judgeModel, o.judgeKeyEnv);
  }
  if (o.judgeModel !== undefined || o.judgeKeyEnv !== undefined) throw new CliError("--judge-model and --judge-key-env go with --judge-url", 2);
  if (o.judge === undefined) return undefined;
  const contextSize = positiveInt("--judge-context", o.judgeContext);
  // The judge runs where the generator would: on the GPU with --gpu-layers (a 7B judge on CPU is very slow).
  let gpuLayers = config?.gpuLayers ?? 0;
  if (config === undefined && typeof o.gpuLayers === "string") {
    gpuLayers = Number(o.gpuLayers);
    if (!/^-?\d+$/.test(o.gpuLayers) || gpuLayers < -1) throw new CliError(`--gpu-layers must be an integer ≥ -1 (-1 = all), got "${o.gpuLayers}"`, 2);
  }
  const threads = config !== undefined && config.threads > 0 ? config.threads : typeof o.threads === "string" ? positiveInt("--threads", o.threads) : undefined;
  return localJudge(o.judge, { contextSize, gpuLayers, ...(threads !== undefined ? { threads } : {}) });
}


export function registerEvalAnswersCommand(evalCmd: Command): void {
  const command = evalCmd
    .command("answers")
    .summary("Table I/II: answer a benchmark with top-k, re-ranked and Attr-RAG, score against the gold answers, judge")
    .description(
      [
        "For each question of --benchmark DIR (SPEC section 5: corpus.jsonl + questions.jsonl with gold answers) runs",
        "every --methods entry through the same pipeline as `attr-rag ask` (embedded on --model, or on a gateway with",
        "--server), scores each final answer against the gold one (cosine, BLEU, Jaccard, ROUGE-1/2/L/Lsum F1 from",
        "packages/core) and, with --judge or --judge-url, has an LLM judge score six criteria 0-5 (missing scores stay",
        "missing). Writes to --out: rows.jsonl (one line per question × method, appended as each finishes),",
        "summary.json (means with 95 % bootstrap intervals, best per metric, majority-of-metrics wins, judge,",
        "retrieval diagnostics: gold chunks and density at k = 5..30 per mode), run.json (the settings), errors.jsonl",
        "(Asks that failed; the run goes on). --resume continues a stopped run from rows.jsonl without scoring any",
        "question twice. Embedded, the corpus is ingested into --store (default <out>/store; unchanged documents are",
        "not re-embedded). Table I goes to stdout (--json: summary.json's content).",
      ].join("\n"),
    )
    .requiredOption("--benchmark <dir>", "folder with corpus.jsonl and questions.jsonl")
    .option("--methods <list>", "comma-separated: topk:K, rerank:K, attr-rag", DEFAULT_ANSWER_METHODS)
    .option("--limit <n>", "only the first N questions")
    .option("--out <dir>", "output folder (default .cache/eval/<benchmark name>)")
    .option("--resume", "continue the run in --out (same settings), skipping rows already written")
    .option("--server <host:port>", "run the Asks on a gateway (its store must hold the benchmark's corpus)")
    .option("--token <token>", "bearer token for --server (default: $ATTR_RAG_TOKEN)")
    .option("--tls-ca <file>", "PEM root certificate for --server")
    .option("--timeout <seconds>", "deadline per Ask on --server")
    .option("--k <n>", "chunks retrieved for attr-rag and the re-rank pool (default 30)")
    .option("--mode <mode>", "retrieval: dense | bm25 | hybrid (default: the config's)")
    .option("--max-tokens <n>", "max new tokens per answer (default 512)")
    .option("--method <m>", "attr-rag's attribution method (default occlusion; see `ask --help`)")
    .option("--samples <n>", "coalitions or permutations of a sampling attribution method")
    .option("--seed <n>", "seed of the bootstrap intervals and of sampling attribution methods", "0")
    .option("--judge <model>", "LLM judge: a local GGUF (path or cache name), run with its chat template")
    .option("--judge-context <n>", "KV cells of the local judge's context", "8192")
    .option("--judge-url <url>", "LLM judge: an OpenAI-compatible API base, e.g. http://127.0.0.1:8080/v1")
    .option("--judge-model <name>", "the model name to send to --judge-url")
    .option("--judge-key-env <VAR>", "environment variable holding the API key for --judge-url")
    .option("--report <file.html>", "also write a self-contained HTML report (tables and charts)")
    .option("--json", "print summary.json's content instead of the table");
  addConfigOptions(addStrategyOptions(command), EMBEDDED_KEYS).action(async (o: EvalAnswersOptions) => {
    const started = performance.now();
    const run = describeRun();
    const methods = parseAnswerMethods(o.methods);
    const benchmark = loadBenchmark(o.benchmark);
    const limit = o.limit !== undefined ? positiveInt("--limit", o.limit) : undefined;
    const questions = benchmark.questions.slice(0, limit);
    const seed = Number(o.seed);
    if (!/^\d+$/.test(o.seed) || !Number.isSafeInteger(seed)) throw new CliError(`--seed must be an integer ≥ 0, got "${o.seed}"`, 2);
    // Every flag is checked before the judge, the corpus or the model is touched.
    for (const m of methods) requestFor(m, questions[0]!.question, o, "eval-check");
    const out = o.out ?? join(".cache/eval", basename(resolve(o.benchmark)));
    const rowsPath = join(out, "rows.jsonl");
    const settingsPath = join(out, "run.json");
    const hasRows = existsSync(rowsPath) && statSync(rowsPath).size > 0;
    if (!o.resume && hasRows) throw new CliError(`--out ${out} already holds rows.jsonl; pass --resume to continue that run, or choose another --out`, 2);
    let config: GatewayConfig | undefined;
    if (o.server === undefined) {
      if (o.store === undefined) o.store = join(out, "store");
      config = configFromOptions(o, EMBEDDED_KEYS);
    }
    mkdirSync(out, { recursive: true });

    const judge = await openJudge(o, config);
    let release: (() => Promise<void>) | undefined;
    try {
      const settings = runSettings(o, o.benchmark, methods.map((m) => m.name), judge, config);
      if (o.resume && hasRows) checkResume(settingsPath, settings);
      writeFileSync(settingsPath, `${JSON.stringify(settings, null, 2)}\n`);
      const log = (line: string) => process.stderr.write(`${line}\n`);
      const previous = readRows(rowsPath, log);
      const done = new Set(previous.map((r) => rowKey(r.question_id, r.method)));

      let runtime: Runtime | undefined;
      let embedder: Embedder;
      let ask: AskFunction;
      const notes: string[] = [];
      if (config !== undefined) {
        await ingestBenchmark(config.store, config.embedder, benchmark.corpusPath);
        runtime = await Runtime.open(config, log).catch((err: unknown) => {
          throw gatewayErrorToCli(err);
        });
        embedder = runtime.local!.embedder;
        const rt = runtime;
        release = () => rt.dispose();
        ask = (request, onEvent, signal) => runAsk(rt, request, onEvent, signal);
      } else {
        const timeout = o.timeout !== undefined ? positiveInt("--timeout", o.timeout) : undefined;
        const token = o.token ?? process.env.ATTR_RAG_TOKEN;
        const remote = { address: o.server!, ...(token !== undefined ? { token } : {}), ...(o.tlsCa !== undefined ? { tlsCa: o.tlsCa } : {}), ...(timeout !== undefined ? { timeout } : {}) };
        const own = await startEmbedder(typeof o.embedder === "string" ? o.embedder : "use-lite");
        embedder = own;
        release = () => own.dispose();
        ask = (request, onEvent, signal) => remoteAsk(remote, request, onEvent, signal);
        notes.push("Asks ran on a gateway (--server); retrieval diagnostics need the corpus in a local store and were skipped.");
      }

      const writer = new RowWriter(rowsPath);
      const controller = new AbortController();
      const stop = abortOnSigint(controller);
      const bar = progressBar("eval answers");
      const errorsPath = join(out, "errors.jsonl");
      let failures = 0;
      let consecutive = 0;
      let diagnostics: RetrievalDiagnostics | undefined;
      try {
        const total = questions.length * methods.length;
        const todo = questions.flatMap((q, qi) => methods.map((m, mi) => ({ q, qi, m, mi }))).filter(({ q, m }) => !done.has(rowKey(q.id, m.name)));
        if (done.size > 0) log(`eval: resuming: ${total - todo.length} of ${total} rows already in ${rowsPath}`);
        const goldVectors = new Map<string, Float32Array>();
        const loopStart = performance.now();
        let finished = 0;
        for (const { q, qi, m, mi } of todo) {
          if (controller.signal.aborted) break;
          const events: AskEvent[] = [];
          const t0 = performance.now();
          try {
            await ask(requestFor(m, q.question, o, `eval-q${qi}-m${mi}`), (e) => events.push(e), controller.signal);
            const outcome = askOutcome(events);
            const harnessMs = performance.now() - t0;
            // The gold answer is the same for every method: embed it once per question.
            let referenceVector = goldVectors.get(q.id);
            if (referenceVector === undefined) {
              referenceVector = (await embedder.embed([q.answer]))[0]!;
              goldVectors.set(q.id, referenceVector);
            }
            const [answerVector] = await embedder.embed([outcome.answer.trim() === "" ? " " : outcome.answer]);
            const verdict = judge !== undefined ? await judgeAnswer(judge, q.question, q.answer, outcome.answer, controller.signal) : undefined;
            const row: AnswerRow = {
              question_id: q.id,
              method: m.name,
              answer: outcome.answer,
              context_ids: outcome.contextIds,
              metrics: scoreAnswer(outcome.answer, q.answer, { answer: answerVector!, reference: referenceVector }),
              timings: { ...outcome.timings, harness_ms: Math.round(harnessMs * 10) / 10 },
              ...(outcome.warnings.length > 0 ? { warnings: outcome.warnings } : {}),
              ...(verdict !== undefined ? { judge: verdict } : {}),
            };
            writer.append(row);
            previous.push(row);
            consecutive = 0;
          } catch (err) {
            if (controller.signal.aborted) break;
            if (err instanceof InputError && err.exitCode === 2 && err.message.startsWith("judge ")) throw err;
            const mapped = gatewayErrorToCli(err);
            const message = mapped instanceof Error ? mapped.message : String(mapped);
            failures++;
            consecutive++;
            writeFileSync(errorsPath, `${JSON.stringify({ question_id: q.id, method: m.name, error: message })}\n`, { flag: "a" });
            log(`eval: question ${q.id}, ${m.name}: ${message} (recorded in ${errorsPath}; continuing)`);
            if (consecutive >= MAX_CONSECUTIVE_FAILURES) {
              throw new CliError(`${MAX_CONSECUTIVE_FAILURES} Asks in a row failed, the last with: ${message}; fix the setup and continue with --resume`, 1);
            }
          }
          finished++;
          const elapsed = performance.now() - loopStart;
          const eta = (elapsed / finished) * (todo.length - finished);
          bar.update(total - todo.length + finished, total, `rows · ${q.id} ${m.name} · ETA ${formatDuration(eta)}`);
        }
        bar.done();
        if (controller.signal.aborted) throw new CliError(`interrupted; ${previous.length} rows are in ${rowsPath}: continue with --resume`, 130);
        if (runtime !== undefined) {
          try {
            diagnostics = await retrievalDiagnostics(runtime.local!.store, embedder, questions, benchmark.corpusPath);
            if (diagnostics === undefined) notes.push("No question has gold documents in the store: no retrieval diagnostics.");
          } catch (err) {
            // The rows are the expensive part: a diagnostics failure must not cost the summary.
            const message = (storeErrorToCli(err) as Error).message;
            notes.push(`Retrieval diagnostics failed: ${message}`);
            log(`eval: retrieval diagnostics failed (${message}); the summary is written without them`);
          }
        }
      } finally {
        stop();
        writer.close();
      }

      const wanted = new Set(questions.map((q) => q.id));
      const rows = previous.filter((r) => wanted.has(r.question_id));
      if (rows.length === 0) throw new CliError(`no rows to summarise in ${rowsPath}: every Ask failed (see ${errorsPath})`, 1);
      const summary = summarizeAnswers(rows, methods.map((m) => m.name), seed);
      const short = methods.filter((m) => (summary.methods[m.name]?.questions ?? 0) < questions.length).map((m) => `${m.name} (${summary.methods[m.name]?.questions ?? 0} of ${questions.length})`);
      if (short.length > 0) {
        const line = `Not every question has a row for: ${short.join(", ")}; the failed Asks are in ${errorsPath}. Means are over the rows present; wins only over questions every method answered.`;
        notes.push(line);
        log(`eval: warning: ${line}`);
      }
      const wallMs = performance.now() - started;
      const report = {
        benchmark: resolve(o.benchmark),
        questions: questions.length,
        rows: rows.length,
        failed_asks_this_run: failures,
        notes,
        target: settings.target,
        judge: judge?.id ?? null,
        wall_ms_this_run: Math.round(wallMs),
        asks_ms_total: Math.round(rows.reduce((s, r) => s + (r.timings["harness_ms"] ?? 0), 0)),
        ...summary,
        ...(diagnostics !== undefined ? { retrieval_diagnostics: diagnostics } : {}),
        run,
      };
      writeFileSync(join(out, "summary.json"), `${JSON.stringify(report, null, 2)}\n`);
      if (o.report !== undefined) {
        const facts: Record<string, string> = {
          benchmark: `${report.benchmark} (${questions.length} questions)`,
          answers: settings.target as string,
          judge: judge?.id ?? "none",
          methods: methods.map((m) => m.name).join(", "),
          rows: String(rows.length),
          "wall time (this run)": formatDuration(wallMs),
          code: `${run.commit ?? "unknown commit"}${run.dirty ? " + uncommitted changes" : ""}`,
        };
        try {
          writeFileSync(o.report, renderAnswersReport({ summary, ...(diagnostics !== undefined ? { diagnostics } : {}), facts, notes }));
        } catch (err) {
          throw new CliError(`--report: cannot write ${o.report}: ${(err as Error).message}`, 1, { cause: err });
        }
        log(`eval: report written to ${o.report}`);
      }
      log(`eval: ${rows.length} rows in ${rowsPath}; summary in ${join(out, "summary.json")}; ${formatDuration(wallMs)}${failures > 0 ? `; ${failures} Asks failed (${errorsPath})` : ""}`);
      process.stdout.write(o.json ? `${JSON.stringify(report)}\n` : formatAnswersTable(summary));
    } finally {
      await release?.();
      if (judge !== undefined) await judge[Symbol.asyncDispose]();
    }
  });
}
