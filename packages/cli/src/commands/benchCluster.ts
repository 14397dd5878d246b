import type { Command } from "commander";
import { addClusterBenchOptions, clusterBenchSettings, reportedModel, withBenchStore, type ClusterBenchFlags } from "./benchSetup.js";
import { describeRun, runClusterBench } from "@attr-rag/bench";
import { positiveInt } from "../parseArgs.js";

interface BenchClusterFlags extends ClusterBenchFlags {
  asks: string;
  repeats: string;
}

/** `attr-rag bench cluster`: asks/minute per worker count, and the gateway + NATS overhead per Ask. */
export function registerBenchClusterCommand(bench: Command): void {
  const command = bench
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
    .option("--asks <n>", "Asks in flight at once per throughput run", "8")
    .option("--repeats <n>", "sequential Asks per latency measurement", "3");
  addClusterBenchOptions(command).action(async (o: BenchClusterFlags) => {
    const run = describeRun();
    const { workerCounts, modelPath, ...settings } = clusterBenchSettings(o);
    const asks = positiveInt("--asks", o.asks);
    const repeats = positiveInt("--repeats", o.repeats);
    await withBenchStore(o.store, "bench cluster", async (store) => {
      const report = await runClusterBench({ store, modelPath, workerCounts, asks, repeats, ...settings, onProgress: (line) => process.stderr.write(`bench cluster: ${line}\n`) });
      const model = reportedModel(o);
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
    });
  });
}
