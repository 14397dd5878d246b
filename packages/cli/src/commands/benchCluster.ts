import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { describeRun, resolveModel } from "@attr-rag/engine";
import { CliError } from "../cliError.js";
import { runClusterBench } from "../cluster/clusterBench.js";
import { positiveInt } from "../parseArgs.js";
import { demoModelPath, ingestDemoCorpus } from "./demo.js";

interface BenchClusterFlags {
  workers: string;
  asks: string;
  repeats: string;
  model?: string;
  store?: string;
  k: string;
  maxTokens: string;
  threads: string;
  contextSize: string;
  json?: boolean;
}

/** `attr-rag bench cluster`: asks/minute per worker count, and the gateway + NATS overhead per Ask. */
export function registerBenchClusterCommand(bench: Command): void {
  bench
    .command("cluster")
    .summary("distributed mode: asks/minute per worker count and the gateway + NATS overhead per Ask")
    .description(
      [
        "Latency: the same Ask, one at a time (after a warm-up), through an embedded gateway (attr-rag serve --store",
        "--model) and through a local cluster with one worker (deploy/local/cluster's processes), with the same engine",
        "settings; overhead = distributed − embedded median. Throughput: --asks Asks at once through clusters of each",
        "--workers count, every worker with --threads engine threads. Needs nats-server on PATH. Without --store the",
        "demo corpus is ingested into a temporary store. Progress goes to stderr.",
      ].join("\n"),
    )
    .option("--workers <list>", "worker counts, comma-separated", "1,2")
    .option("--asks <n>", "Asks in flight at once per throughput run", "8")
    .option("--repeats <n>", "sequential Asks per latency measurement", "3")
    .option("--model <path|name>", "generator GGUF (default: the demo model)")
    .option("--store <dir>", "chunk store (default: the demo corpus in a temporary store)")
    .option("--k <n>", "chunks retrieved per Ask", "8")
    .option("--max-tokens <n>", "max new tokens per answer", "64")
    .option("--threads <n>", "engine threads per worker (and of the embedded gateway)", "1")
    .option("--context-size <n>", "generator KV cells per worker (4 sequences share them)", "16384")
    .option("--json", "print the report as one JSON line")
    .action(async (o: BenchClusterFlags) => {
      const run = describeRun();
      const workerCounts = o.workers.split(",").map((w) => positiveInt("--workers", w.trim()));
      if (workerCounts.length === 0) throw new CliError("--workers needs at least one count, e.g. 1,2");
      const asks = positiveInt("--asks", o.asks);
      const repeats = positiveInt("--repeats", o.repeats);
      const settings = {
        k: positiveInt("--k", o.k),
        maxTokens: positiveInt("--max-tokens", o.maxTokens),
        threads: positiveInt("--threads", o.threads),
        contextSize: positiveInt("--context-size", o.contextSize),
      };
      let modelPath: string;
      try {
        modelPath = o.model !== undefined ? resolveModel(o.model) : demoModelPath();
      } catch (err) {
        throw err instanceof CliError ? err : new CliError(`--model: ${(err as Error).message}`, 2, { cause: err });
      }
      const tmp = o.store === undefined ? mkdtempSync(join(tmpdir(), "attr-rag-bench-cluster-")) : undefined;
      const store = o.store ?? join(tmp!, "store");
      try {
        if (o.store === undefined) await ingestDemoCorpus(store, "bench cluster");
        const report = await runClusterBench({ store, modelPath, workerCounts, asks, repeats, ...settings, onProgress: (line) => process.stderr.write(`bench cluster: ${line}\n`) });
        // The model as given (a relative path or a cache name), not this machine's absolute path.
        const model = o.model ?? "examples/models/stories260K.gguf";
        if (o.json) {
          process.stdout.write(`${JSON.stringify({ ...report, model, run })}\n`);
          return;
        }
        const l = report.latency;
        console.log(`model ${model}: k ${settings.k}, ${settings.maxTokens} new tokens, ${settings.threads} engine thread(s) per worker`);
        console.log(
          `latency (median of ${repeats}): embedded ${l.embedded.median_ms.toFixed(0)} ms, distributed with 1 worker ${l.distributed_1_worker.median_ms.toFixed(0)} ms; ` +
            `overhead ${l.overhead_ms.toFixed(0)} ms (${(l.overhead_fraction * 100).toFixed(1)} %, goal ≤ 5 %); same final answer: ${l.same_final_answer ? "yes" : "NO"}`,
        );
        for (const t of report.throughput) {
          const speedup = report.speedup[String(t.workers)];
          console.log(
            `${String(t.workers).padStart(2)} worker(s): ${t.asks} asks in ${(t.wall_ms / 1000).toFixed(1)} s = ${t.asks_per_minute.toFixed(1)} asks/minute` +
              `${speedup !== undefined ? ` (${speedup.toFixed(2)}× one worker)` : ""}; jobs per worker ${t.jobs_per_worker.join(", ")}`,
          );
        }
      } finally {
        if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true });
      }
    });
}
