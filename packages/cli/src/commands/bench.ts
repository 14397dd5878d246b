import type { Command } from "commander";
import { loadModelArg, OCCLUSION_STRATEGIES } from "@attr-rag/engine";
import { CliError } from "../cliError.js";
import { defaultCorpus } from "../defaultCorpus.js";
import { progressBar } from "@attr-rag/telemetry";
import { nonNegativeInt, positiveInt } from "../parseArgs.js";
import { registerBenchAttributionCommand } from "./benchAttribution.js";
import { registerBenchClusterCommand } from "./benchCluster.js";
import { registerBenchShardsCommand } from "./benchShards.js";
import { registerBenchBatchCommand } from "./benchBatch.js";
import { registerBenchThroughputCommand } from "./benchThroughput.js";
import { registerBenchTelemetryCommand } from "./benchTelemetry.js";
import { registerBenchPeersCommand } from "./benchPeers.js";
import { BENCH_STRATEGIES, describeRun, occlusionBenchText, readBenchCorpus, runOcclusionBench, type BenchStrategy } from "@attr-rag/bench";

interface BenchOcclusionOptions {
  model: string;
  sets: string;
  setTokens: string;
  maxTokens: string;
  strategies: string;
  recompute: string;
  screenTopK?: string;
  sentenceRuns: string;
  corpus?: string;
  contextSize?: string;
  threads?: string;
  batchSize: string;
  ubatchSize?: string;
  flashAttention: string;
  kv: string;
  sampling: string;
  json?: boolean;
}

export function registerBenchCommand(program: Command): void {
  const bench = program.command("bench").summary("benchmarks (JSON with --json)");
  registerBenchClusterCommand(bench);
  registerBenchShardsCommand(bench);
  registerBenchBatchCommand(bench);
  registerBenchThroughputCommand(bench);
  registerBenchTelemetryCommand(bench);
  registerBenchAttributionCommand(bench);
  registerBenchPeersCommand(bench);
  bench
    .command("occlusion")
    .summary("time the occlusion workload under each engine strategy and compare answers with naive")
    .description(
      [
        "Builds a prompt of --sets context sets of about --set-tokens tokens cut from a corpus, generates A_full once",
        "plainly, then runs the whole occlusion workload (A_full + one answer per occluded set) with each strategy.",
        "Every strategy's answers are compared token by token with naive's; where one first differs, naive_margin is",
        "naive's top-1 minus top-2 logit at that step (a near-tie when ≤ 0.1). The APPROXIMATE strategies (kv-reuse,",
        "kv-mask) run once per --recompute value and get a fidelity entry against the first exact strategy that ran:",
        "occluded answers token-identical, mean first divergence step, mean KL and top-1 agreement of next-token",
        "distributions along the exact answers (teacher-forced), mean |Δα| per text metric, and whether the",
        "selection is the same. `screen` (opt-in) screens every set with one teacher-forced kv-reuse pass and",
        "regenerates the top --screen-top-k by drop (default half) exactly; the rest keep A_full. Progress goes to stderr.",
      ].join("\n"),
    )
    .requiredOption("--model <path|name>", "GGUF model to run: a path or a model-cache name")
    .option("--sets <n>", "number of context sets", "10")
    .option("--set-tokens <n>", "tokens per context set", "150")
    .option("--max-tokens <n>", "new tokens per answer", "128")
    .option("--strategies <list>", `comma-separated, from ${BENCH_STRATEGIES.join(", ")}; answers are compared only when naive is among them`, OCCLUSION_STRATEGIES.join(","))
    .option("--recompute <list>", "approximate strategies: prompt tokens recomputed before the suffix, one run per value", "0")
    .option("--screen-top-k <n>", "screen: sets regenerated (default ⌈sets / 2⌉)")
    .option("--sentence-runs <n>", "also time each exact strategy without and with sentence-level attribution, alternately, n times each (0: not measured)", "0")
    .option("--corpus <file>", "corpus.jsonl or a text file to cut sets from (default: the demo corpus)")
    .option("--context-size <n>", "KV cache cells (default: what the workload needs)")
    .option("--threads <n>", "CPU threads (default: all)")
    .option("--batch-size <n>", "tokens per llama_decode call", "512")
    .option("--ubatch-size <n>", "tokens per physical micro-batch (default: batch size)")
    .option("--flash-attention <mode>", "on | off | auto", "off")
    .option("--kv <layout>", "KV cache layout: streams (one per sequence) | unified", "streams")
    .option("--sampling <path>", "where output rows are read: device (picks in the decode graph) | host (whole logits rows)", "device")
    .option("--json", "print the report as JSON")
    .action(async (o: BenchOcclusionOptions) => {
      // What is running: the code was loaded now, so the commit and tree state are read now, not at the end.
      const run = describeRun();
      const sets = positiveInt("--sets", o.sets);
      const setTokens = positiveInt("--set-tokens", o.setTokens);
      const maxTokens = positiveInt("--max-tokens", o.maxTokens);
      const strategies = o.strategies.split(",").map((s) => s.trim()).filter(Boolean) as BenchStrategy[];
      const unknown = strategies.filter((s) => !BENCH_STRATEGIES.includes(s));
      if (unknown.length > 0 || strategies.length === 0) {
        throw new CliError(`--strategies: unknown ${unknown.join(", ") || "(empty)"}; use ${BENCH_STRATEGIES.join(",")}`);
      }
      const recompute = o.recompute.split(",").map((x) => nonNegativeInt("--recompute", x.trim()));
      const screenTopK = o.screenTopK !== undefined ? nonNegativeInt("--screen-top-k", o.screenTopK) : undefined;
      if (screenTopK !== undefined && !strategies.includes("screen")) throw new CliError("--screen-top-k applies to the screen strategy; add screen to --strategies");
      if (o.kv === "unified" && strategies.includes("kv-reuse")) {
        throw new CliError("--kv unified cannot run kv-reuse (it shifts cells a unified cache shares); use --kv streams, or kv-mask");
      }
      if (!["on", "off", "auto"].includes(o.flashAttention)) throw new CliError("--flash-attention must be on, off or auto");
      if (o.sampling !== "device" && o.sampling !== "host") throw new CliError("--sampling must be device or host");
      const corpus = await readBenchCorpus(o.corpus ?? defaultCorpus());
      const model = await loadModelArg(o.model);
      try {
        if (o.kv !== "streams" && o.kv !== "unified") throw new CliError("--kv must be streams or unified");
        const kvUnified = o.kv === "unified";
        // Per sequence: the prompt (sets, labels, template), the answer and a draft window.
        const perSequence = 2 ** Math.ceil(Math.log2(sets * (setTokens + 16) + 400 + maxTokens + 128));
        const needed = kvUnified ? (sets + 2) * perSequence : (sets + 1) * perSequence;
        const contextSize = o.contextSize ? positiveInt("--context-size", o.contextSize) : needed;
        const contextOptions = {
          contextSize,
          sequences: Math.min(256, sets + 1),
          batchSize: positiveInt("--batch-size", o.batchSize),
          ...(o.ubatchSize ? { ubatchSize: positiveInt("--ubatch-size", o.ubatchSize) } : {}),
          ...(o.threads ? { threads: positiveInt("--threads", o.threads) } : {}),
          flashAttention: o.flashAttention as "on" | "off" | "auto",
          kvUnified,
        };
        const ctx = await model.createContext({ ...contextOptions, sampling: o.sampling });
        // Fidelity compares whole next-token distributions: a host-path context of the same shape, only when needed.
        const approximate = strategies.some((s) => s === "kv-reuse" || s === "kv-mask");
        const fidelityContext = approximate && ctx.info.sampling === "device" ? await model.createContext({ ...contextOptions, sampling: "host" }) : undefined;
        const bar = progressBar("bench occlusion");
        const report = await runOcclusionBench(ctx, {
          sets,
          setTokens,
          maxTokens,
          strategies,
          recompute,
          ...(screenTopK !== undefined ? { screenTopK } : {}),
          sentenceRuns: nonNegativeInt("--sentence-runs", o.sentenceRuns),
          corpus,
          ...(fidelityContext ? { fidelityContext } : {}),
          onProgress: (done, total, label) => bar.update(done, total, label),
        });
        bar.done();
        if (o.json) {
          // The model as given (a relative path or a cache name), not this machine's absolute path.
          process.stdout.write(`${JSON.stringify({ ...report, model: o.model, run })}\n`);
          return;
        }
        console.log(occlusionBenchText(report).join("\n"));
      } finally {
        await model.dispose();
      }
    });
}
