import type { Command } from "commander";
import { describeRun } from "@attr-rag/engine";
import { EmbedderMismatchError } from "@attr-rag/index";
import { addAskBenchOptions, benchModelPath, withBenchStore } from "../cluster/benchSetup.js";
import { CliError } from "../cliError.js";
import { positiveInt } from "../parseArgs.js";
import { runThroughputBench } from "../throughput/throughputBench.js";

interface BenchThroughputFlags {
  model?: string;
  store?: string;
  embedder: string;
  concurrency: string;
  asks: string;
  k: string;
  maxTokens: string;
  threads: string;
  sequencesPerAsk: string;
  cellsPerSequence: string;
  strategy: string;
  json?: boolean;
}

function strategyArg(s: string): "naive" | "prefix-shared" | "speculative" {
  if (s === "naive" || s === "prefix-shared" || s === "speculative") return s;
  throw new CliError(`--strategy must be naive, prefix-shared or speculative, got "${s}"`);
}

function embedderArg(s: string): string {
  if (s === "use-lite" || /^gguf:.+/.test(s)) return s;
  throw new CliError(`--embedder must be use-lite or gguf:/path/to/model.gguf, got "${s}"`);
}

/** `attr-rag bench throughput`: the same Asks through one embedded gateway at each concurrency. */
export function registerBenchThroughputCommand(bench: Command): void {
  const command = bench
    .command("throughput")
    .summary("continuous batching: the same Asks through one embedded gateway at each concurrency")
    .description(
      [
        "Opens an embedded gateway in this process for each --concurrency value c (maxConcurrentAsks c, one engine",
        "context of c × --sequences-per-ask sequences with --cells-per-sequence KV cells each) and sends the same",
        "--asks Asks over gRPC, c at a time. Reports Asks/minute, the context's llama_decode calls per Ask and mean rows",
        "per call, p50/p95 latency, and whether every final answer, selection and α table equals the concurrency-1 run.",
        "Without --store the demo corpus is ingested into a temporary store. Progress on stderr.",
      ].join("\n"),
    );
  addAskBenchOptions(command)
    .option("--embedder <spec>", "the store's embedder (embeds the questions): use-lite | gguf:/path/to/model.gguf", "use-lite")
    .option("--concurrency <list>", "Asks in flight at once, comma-separated (include 1: it is the reference)", "1,2,4,8")
    .option("--asks <n>", "Asks per concurrency", "16")
    .option("--threads <n>", "engine threads", "2")
    .option("--sequences-per-ask <n>", "sequences each Ask's jobs may use", "9")
    .option("--cells-per-sequence <n>", "KV cells per sequence", "4096")
    .option("--strategy <name>", "occlusion strategy: naive | prefix-shared | speculative", "speculative")
    .option("--json", "print the report as one JSON line")
    .action(async (o: BenchThroughputFlags) => {
      const run = describeRun();
      const concurrency = o.concurrency.split(",").map((c) => positiveInt("--concurrency", c.trim()));
      if (concurrency.length === 0) throw new CliError("--concurrency needs at least one value, e.g. 1,8");
      const modelPath = benchModelPath(o.model);
      const settings = {
        concurrency,
        asks: positiveInt("--asks", o.asks),
        k: positiveInt("--k", o.k),
        maxTokens: positiveInt("--max-tokens", o.maxTokens),
        threads: positiveInt("--threads", o.threads),
        sequencesPerAsk: positiveInt("--sequences-per-ask", o.sequencesPerAsk),
        cellsPerSequence: positiveInt("--cells-per-sequence", o.cellsPerSequence),
        strategy: strategyArg(o.strategy),
        embedder: embedderArg(o.embedder),
      };
      await withBenchStore(o.store, "bench throughput", async (store) => {
        const report = await runThroughputBench({ store, modelPath, ...settings, onProgress: (line) => process.stderr.write(`bench throughput: ${line}\n`) }).catch((err: unknown) => {
          throw err instanceof EmbedderMismatchError ? new CliError(`--embedder: ${err.message}`, 2, { cause: err }) : err;
        });
        const model = o.model ?? "examples/models/stories260K.gguf";
        if (o.json) {
          process.stdout.write(`${JSON.stringify({ ...report, model, run })}\n`);
          return;
        }
        console.log(`model ${model}: ${settings.asks} Asks, k ${settings.k}, ${settings.maxTokens} new tokens, ${settings.threads} engine thread(s)`);
        for (const r of report.runs) {
          console.log(
            `concurrency ${String(r.concurrency).padStart(2)}: ${r.asks_per_minute.toFixed(2)} Asks/minute, ${r.decode_calls_per_ask.toFixed(0)} decode calls per Ask, ` +
              `${r.mean_rows_per_call.toFixed(1)} rows per call, latency p50 ${(r.latency.p50_ms / 1000).toFixed(1)} s p95 ${(r.latency.p95_ms / 1000).toFixed(1)} s` +
              (r.same_as_concurrency_1 === null ? "" : r.same_as_concurrency_1 ? ", same answers" : `, differs: Asks ${r.differing_asks.join(", ")}`),
          );
        }
        const h = report.highest;
        if (h !== null) {
          console.log(`concurrency ${h.concurrency} ÷ 1: decode calls per Ask ${h.decode_calls_per_ask_ratio.toFixed(2)} (goal ≤ 0.3), Asks/minute ${h.asks_per_minute_ratio.toFixed(2)}×`);
        }
      }, settings.embedder);
    });
}
