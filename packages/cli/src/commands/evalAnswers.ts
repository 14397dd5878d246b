import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { Command } from "commander";
import { describeRun } from "@attr-rag/bench";
import { InputError, positiveInt } from "@attr-rag/core";
import {
  answerQuestions,
  DEFAULT_ANSWER_METHODS,
  formatAnswersTable,
  httpJudge,
  ingestBenchmark,
  loadBenchmark,
  localJudge,
  parseAnswerMethods,
  readRows,
  requestFor,
  writeAnswersSummary,
  type AskFunction,
  type Judge,
} from "@attr-rag/eval";
import { remoteAsk, runAsk, Runtime, type GatewayConfig } from "@attr-rag/gateway";
import { startEmbedder, type Embedder } from "@attr-rag/index";
import { askRequestFromFlags, type AskFlags } from "../ask/askRequestFromFlags.js";
import { addStrategyOptions } from "../ask/strategyOptions.js";
import { addConfigOptions, configFromOptions, gatewayErrorToCli } from "../gatewayCli.js";
import { abortOnSigint, EMBEDDED_KEYS } from "./ask.js";

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
    throw new InputError(`--resume: cannot read ${path} (${(err as Error).message}); it records the settings of the run to continue`, 2, { cause: err });
  }
  const differ = Object.keys(settings).filter((k) => JSON.stringify(previous[k]) !== JSON.stringify(settings[k]));
  if (differ.length > 0) {
    const what = differ.map((k) => `${k}: was ${JSON.stringify(previous[k])}, now ${JSON.stringify(settings[k])}`).join("; ");
    throw new InputError(`--resume: the settings differ from the run in ${path} (${what}); use the same flags, or another --out for a new run`, 2);
  }
}

async function openJudge(o: EvalAnswersOptions, config: GatewayConfig | undefined): Promise<Judge | undefined> {
  if (o.judge !== undefined && o.judgeUrl !== undefined) throw new InputError("--judge (a local GGUF) and --judge-url (an HTTP endpoint) exclude each other; pick one", 2);
  if (o.judgeUrl !== undefined) {
    if (o.judgeModel === undefined) throw new InputError("--judge-url needs --judge-model (the model name the endpoint serves)", 2);
    return httpJudge(o.judgeUrl, o.judgeModel, o.judgeKeyEnv);
  }
  if (o.judgeModel !== undefined || o.judgeKeyEnv !== undefined) throw new InputError("--judge-model and --judge-key-env go with --judge-url", 2);
  if (o.judge === undefined) return undefined;
  const contextSize = positiveInt("--judge-context", o.judgeContext);
  // The judge runs where the generator would: on the GPU with --gpu-layers (a 7B judge on CPU is very slow).
  let gpuLayers = config?.gpuLayers ?? 0;
  if (config === undefined && typeof o.gpuLayers === "string") {
    gpuLayers = Number(o.gpuLayers);
    if (!/^-?\d+$/.test(o.gpuLayers) || gpuLayers < -1) throw new InputError(`--gpu-layers must be an integer ≥ -1 (-1 = all), got "${o.gpuLayers}"`, 2);
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
    if (!/^\d+$/.test(o.seed) || !Number.isSafeInteger(seed)) throw new InputError(`--seed must be an integer ≥ 0, got "${o.seed}"`, 2);
    // Every flag is checked before the judge, the corpus or the model is touched.
    for (const m of methods) requestFor(m, askRequestFromFlags(questions[0]!.question, { ...o, requestId: "eval-check" }));
    const out = o.out ?? join(".cache/eval", basename(resolve(o.benchmark)));
    const rowsPath = join(out, "rows.jsonl");
    const settingsPath = join(out, "run.json");
    const hasRows = existsSync(rowsPath) && statSync(rowsPath).size > 0;
    if (!o.resume && hasRows) throw new InputError(`--out ${out} already holds rows.jsonl; pass --resume to continue that run, or choose another --out`, 2);
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

      const controller = new AbortController();
      const stop = abortOnSigint(controller);
      let result: Awaited<ReturnType<typeof answerQuestions>>;
      try {
        result = await answerQuestions({
          questions,
          methods,
          request: (m, q, requestId) => requestFor(m, askRequestFromFlags(q.question, { ...o, requestId })),
          ask,
          embedder,
          judge,
          out,
          previous,
          store: runtime?.local!.store,
          corpusPath: benchmark.corpusPath,
          describeError: (err) => {
            const mapped = gatewayErrorToCli(err);
            return mapped instanceof Error ? mapped.message : String(mapped);
          },
          notes,
          log,
          signal: controller.signal,
        });
      } finally {
        stop();
      }
      const { report, summary } = writeAnswersSummary({
        benchmark: o.benchmark,
        questions,
        methods,
        rows: previous,
        out,
        seed,
        ...result,
        notes,
        target: settings.target as string,
        judge,
        wallMs: performance.now() - started,
        run,
        report: o.report,
        log,
      });
      process.stdout.write(o.json ? `${JSON.stringify(report)}\n` : formatAnswersTable(summary));
    } finally {
      await release?.();
      if (judge !== undefined) await judge[Symbol.asyncDispose]();
    }
  });
}
