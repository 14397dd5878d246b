import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { defaultModelPath } from "@attr-rag/engine";
import { describeRun, runShardBench } from "@attr-rag/bench";
import { positiveInt } from "../parseArgs.js";
import { DEMO_CORPUS } from "./demo.js";

interface BenchShardsFlags {
  data?: string;
  queries: string;
  clients: string;
  ingest: string;
  json?: boolean;
}

/** `attr-rag bench shards`: one store vs 2 shards vs 2 replicas over NATS (latency, queries/s, equality, ingest). */
export function registerBenchShardsCommand(bench: Command): void {
  bench
    .command("shards")
    .summary("sharded and replicated index: query latency and queries/s vs one store, equal rankings, ingest rate")
    .description(
      [
        "Ingests the corpora of --data (folders with corpus.jsonl and questions.jsonl, e.g. ../shared/data/*; default the",
        "demo corpus) into one store and into 2 shards, then serves each configuration with real `attr-rag index serve`",
        "processes on a fresh nats-server: one store (unsharded), 1 shard × 1 replica, 2 shards, 1 shard × 2 replicas.",
        "Every question is searched top-k in each mode and compared with one store (scores to 1e-9 position by position,",
        "the same chunks in each run of equal scores, and the chunks an approximate search did not reach counted); then",
        "--queries timed queries per mode and client count. Last, --ingest documents go through the ingest log into",
        "2 shards, with the vectors in the entries and without (replicas embed), and a second replica per shard catches",
        "up: its apply rate, and whether both replicas end identical. The embedder is the shipped stories260K GGUF.",
        "Progress goes to stderr.",
      ].join("\n"),
    )
    .option("--data <dirs>", "comma-separated data set folders (corpus.jsonl + questions.jsonl)")
    .option("--queries <n>", "timed queries per configuration, mode and client count", "300")
    .option("--clients <list>", "client counts", "1,4")
    .option("--ingest <n>", "documents ingested through the log for the ingest rate", "300")
    .option("--json", "print the report as JSON")
    .action(async (o: BenchShardsFlags) => {
      const run = describeRun();
      const sets = o.data === undefined ? [] : o.data.split(",").map((d) => d.trim()).filter((d) => d !== "");
      for (const d of sets) if (!existsSync(join(d, "corpus.jsonl")) || !existsSync(join(d, "questions.jsonl"))) throw new Error(`--data ${d}: needs corpus.jsonl and questions.jsonl`);
      const corpora = sets.length > 0 ? sets.map((d) => join(d, "corpus.jsonl")) : [DEMO_CORPUS];
      const questionFiles = sets.length > 0 ? sets.map((d) => join(d, "questions.jsonl")) : [join(DEMO_CORPUS, "../questions.jsonl")];
      const questions = questionFiles.flatMap((f) => readFileSync(f, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { question: string }).question));
      const clients = o.clients.split(",").map((c) => positiveInt("--clients", c.trim()));
      const report = await runShardBench({
        corpora,
        questions,
        embedderPath: defaultModelPath(),
        queries: positiveInt("--queries", o.queries),
        clients,
        ingestDocuments: positiveInt("--ingest", o.ingest),
        k: 30,
        onProgress: (line) => process.stderr.write(`bench shards: ${line}\n`),
      });
      const data = { data: sets.map((d) => d.split("/").filter(Boolean).pop()), questions: questions.length, k: 30, embedder: "stories260K.gguf", ...report, run };
      if (o.json) {
        process.stdout.write(`${JSON.stringify(data)}\n`);
        return;
      }
      for (const l of report.latency) console.log(`${l.config.padEnd(22)} ${l.mode.padEnd(7)} ${l.clients} client(s): p50 ${l.p50_ms.toFixed(1)} ms, p99 ${l.p99_ms.toFixed(1)} ms, ${l.queries_per_s.toFixed(0)} queries/s`);
      for (const [config, modes] of Object.entries(report.compared)) console.log(`${config}: ${Object.entries(modes).map(([m, c]) => `${m} ${c.equal}/${c.equal + c.differ} equal (${c.unreached} unreached)`).join(", ")}`);
      for (const [name, i] of [["vectors in the log", report.ingest.vectors_in_log], ["replicas embed", report.ingest.replicas_embed]] as const) {
        console.log(`ingest through the log, ${name}: ${i.logged_per_s.toFixed(0)} documents/s logged, ${i.applied_per_s_per_replica.toFixed(1)} applied per replica, replicas ${i.identical ? "identical" : "DIFFER"}`);
      }
    });
}
