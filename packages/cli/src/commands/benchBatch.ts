import type { Command } from "commander";
import { describeRun, runBatchBench } from "@attr-rag/bench";
import { addClusterBenchOptions, clusterBenchSettings, reportedModel, withBenchStore, type ClusterBenchFlags } from "./benchSetup.js";
import { nonNegativeInt, positiveInt } from "../parseArgs.js";

interface BenchBatchFlags extends ClusterBenchFlags {
  items: string;
  interactive: string;
  large: string;
}

/** `attr-rag bench batch`: batch items/minute per worker count against the same items one by one, embedded. */
export function registerBenchBatchCommand(bench: Command): void {
  const command = bench
    .command("batch")
    .summary("batches: items/minute per worker count, interactive latency under a batch, a large batch's reads")
    .description(
      [
        "The same --items Asks one at a time through an embedded gateway (attr-rag serve --store --model), then as one",
        "batch through local clusters of each --workers count (every worker with --threads engine threads). On the",
        "largest cluster: --interactive Asks timed idle and while a 30-item batch runs, and a --large batch of tiny",
        "items submitted in one call, its status read while it runs, its results read back, then cancelled. Needs",
        "nats-server on PATH. Without --store the demo corpus is ingested into a temporary store. Progress on stderr.",
      ].join("\n"),
    )
    .option("--items <n>", "items of the measured batch", "16")
    .option("--interactive <n>", "interactive Asks timed idle and during a batch (0 to skip)", "3")
    .option("--large <n>", "items of the large batch (0 to skip)", "10000");
  addClusterBenchOptions(command).action(async (o: BenchBatchFlags) => {
    const run = describeRun();
    const { workerCounts, modelPath, ...engine } = clusterBenchSettings(o);
    const settings = { ...engine, items: positiveInt("--items", o.items), interactive: nonNegativeInt("--interactive", o.interactive), large: nonNegativeInt("--large", o.large) };
    await withBenchStore(o.store, "bench batch", async (store) => {
      const report = await runBatchBench({ store, modelPath, workerCounts, ...settings, onProgress: (line) => process.stderr.write(`bench batch: ${line}\n`) });
      const model = reportedModel(o);
      if (o.json) {
        process.stdout.write(`${JSON.stringify({ ...report, model, run })}\n`);
        return;
      }
      const e = report.embedded_one_by_one;
      console.log(`model ${model}: k ${settings.k}, ${settings.maxTokens} new tokens, ${settings.threads} engine thread(s) per worker`);
      console.log(`embedded, one Ask at a time: ${e.items} items in ${(e.wall_ms / 1000).toFixed(1)} s = ${e.items_per_minute.toFixed(1)} items/minute`);
      for (const b of report.batches) {
        const x = report.speedup[String(b.workers)];
        console.log(
          `${String(b.workers).padStart(2)} worker(s), one batch: ${b.items} items in ${(b.wall_ms / 1000).toFixed(1)} s = ${b.items_per_minute.toFixed(1)} items/minute` +
            `${x !== undefined ? ` (${x.toFixed(2)}× one worker)` : ""}; jobs per worker ${b.jobs_per_worker.join(", ")}`,
        );
      }
      if (report.cluster_vs_embedded !== null) console.log(`cluster with 1 worker ÷ embedded one by one: ${report.cluster_vs_embedded.toFixed(2)} (goal ≥ 0.90)`);
      const i = report.interactive;
      if (i !== null) console.log(`interactive Ask: ${i.idle.median_ms.toFixed(0)} ms idle, ${i.during_batch.median_ms.toFixed(0)} ms during a batch = ${i.ratio.toFixed(2)}× (goal ≤ 2)`);
      const l = report.large;
      if (l !== null) {
        console.log(
          `large batch: ${l.items} items (${(l.request_bytes / 1048576).toFixed(1)} MB) submitted in ${(l.submit_ms / 1000).toFixed(2)} s; status median ${l.status.median_ms.toFixed(1)} ms, ` +
            `p95 ${l.status.p95_ms.toFixed(1)} ms; ${l.results_read.results} results read in ${l.results_read.ms.toFixed(0)} ms; cancel to end ${(l.cancel_to_end_ms / 1000).toFixed(1)} s`,
        );
      }
    });
  });
}
