import type { Command } from "commander";
import { EmbedderMismatchError } from "@attr-rag/index";
import { addAskBenchOptions, benchModelPath, withBenchStore } from "./benchSetup.js";
import { CliError } from "../cliError.js";
import { oneOf, positiveInt } from "../parseArgs.js";
import { describeRun, runThroughputBench, type EngineVariant } from "@attr-rag/bench";

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
  sampling: string;
  kvCache: string;
  flashAttention: string;
  json?: boolean;
}

/** Every combination of the comma-separated --sampling, --kv-cache and --flash-attention values, in that order. */
export function engineVariants(o: { sampling: string; kvCache: string; flashAttention: string }): EngineVariant[] {
  const list = <T extends string>(flag: string, value: string, choices: readonly T[]) => {
    const values = value.split(",").map((x) => oneOf(flag, x.trim(), choices));
    if (new Set(values).size !== values.length) throw new CliError(`${flag} lists a value twice: ${value}`);
    return values;
  };
  const variants: EngineVariant[] = [];
  for (const kvCache of list("--kv-cache", o.kvCache, ["streams", "unified"] as const)) {
    for (const flashAttention of list("--flash-attention", o.flashAttention, ["off", "on", "auto"] as const)) {
      for (const sampling of list("--sampling", o.sampling, ["host", "device"] as const)) variants.push({ sampling, kvCache, flashAttention });
    }
  }
  return variants;
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
    .option("--sampling <list>", "where output rows are read, comma-separated: device (picks in the decode graph) | host (whole logits rows); host,device is the A/B", "device")
    .option("--kv-cache <list>", "KV cache layouts, comma-separated: streams | unified", "streams")
    .option("--flash-attention <list>", "flash attention, comma-separated: off | on | auto", "off")
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
        variants: engineVariants(o),
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
            `${r.sampling} picks, ${r.kv_cache} KV, flash ${r.flash_attention}, concurrency ${String(r.concurrency).padStart(2)}: ${r.asks_per_minute.toFixed(2)} Asks/minute, ` +
              `${r.decode_calls_per_ask.toFixed(0)} decode calls per Ask, ${r.mean_rows_per_call.toFixed(1)} rows per call, latency p50 ${(r.latency.p50_ms / 1000).toFixed(1)} s p95 ${(r.latency.p95_ms / 1000).toFixed(1)} s, ` +
              `${r.engine.bytes_to_host_per_row.toFixed(0)} bytes and ${r.engine.host_us_per_row.toFixed(1)} µs of host time per output row, ${(r.engine.decode_share * 100).toFixed(0)} % of the wall in llama_decode` +
              (r.same_as_concurrency_1 === null ? "" : r.same_as_concurrency_1 ? ", same answers" : `, differs: Asks ${r.differing_asks.join(", ")}`),
          );
        }
        for (const ab of report.sampling_ab) {
          console.log(
            `host ÷ device picks at concurrency ${ab.concurrency} (${ab.kv_cache} KV, flash ${ab.flash_attention}): host time per row ${ab.host_us_per_row_ratio.toFixed(0)}×, ` +
              `bytes per row ${ab.bytes_per_row.host.toFixed(0)} → ${ab.bytes_per_row.device.toFixed(0)}, Asks/minute ${ab.asks_per_minute_ratio.toFixed(2)}× on the device path, answers ${ab.same_answers ? "the same" : "DIFFER"}`,
          );
        }
        const h = report.highest;
        if (h !== null) {
          console.log(`concurrency ${h.concurrency} ÷ 1: decode calls per Ask ${h.decode_calls_per_ask_ratio.toFixed(2)} (goal ≤ 0.3), Asks/minute ${h.asks_per_minute_ratio.toFixed(2)}×`);
        }
      }, settings.embedder);
    });
}
