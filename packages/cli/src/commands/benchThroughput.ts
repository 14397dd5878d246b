import type { Command } from "commander";
import { EmbedderMismatchError } from "@attr-rag/index";
import { addAskBenchOptions, benchModelPath, withBenchStore } from "./benchSetup.js";
import { CliError } from "../cliError.js";
import { oneOf, positiveInt } from "../parseArgs.js";
import { describeRun, runThroughputBench, throughputText, type EngineVariant } from "@attr-rag/bench";

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
        console.log(throughputText(report, model, settings).join("\n"));
      }, settings.embedder);
    });
}
