#!/usr/bin/env node
// Ingest throughput of a local cluster whose index embeds on its workers, per number of embed workers.
//
//   node packages/bench/scripts/embed-workers-bench.mjs [--docs 200] [--workers 1,2] [--embedder PATH] [--threads 1]
//
// For each worker count: a fresh store built for the GGUF embedder (default: the shipped stories260K, a real
// llama run as a mean-pooled embedder), a local cluster (nats-server with the shipped permissions,
// `attr-rag index serve --nats --embedder gguf:PATH`, a gateway, N `attr-rag worker --embedder PATH --threads T`),
// and --docs documents (about 1,300 characters, two chunks each) through the gateway's IngestDocuments; the
// time is from the first document sent to the response. Chunks/s per run and the speed-up over the first
// count. JSON on stdout, progress on stderr. Needs `npm run build` and nats-server.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { credentials, Metadata } from "@grpc/grpc-js";
import { LocalCluster } from "@attr-rag/cluster";
import { IndexServiceClient, IngestDocumentsRequest } from "@attr-rag/contracts";
import { defaultModelPath } from "@attr-rag/engine";
import { describeRun } from "@attr-rag/bench";
import { ChunkStore, GgufEmbedder } from "@attr-rag/index";
import { syntheticCorpus } from "./synthetic-corpus.mjs";

const { values } = parseArgs({
  options: {
    docs: { type: "string", default: "200" },
    workers: { type: "string", default: "1,2" },
    embedder: { type: "string", default: defaultModelPath() },
    threads: { type: "string", default: "1" },
  },
});
const run = describeRun(process.argv, "node packages/bench/scripts/embed-workers-bench.mjs");
const docCount = Number(values.docs);
const threads = Number(values.threads);
const counts = values.workers.split(",").map(Number);
if (!Number.isInteger(docCount) || docCount < 1) throw new Error("--docs must be a positive integer");
if (!Number.isInteger(threads) || threads < 1) throw new Error("--threads must be a positive integer");
if (counts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error("--workers must list positive integers, e.g. 1,2");
const progress = (line) => process.stderr.write(`embed-workers-bench: ${line}\n`);

const corpus = syntheticCorpus(99, 1300);
const docs = Array.from({ length: docCount }, (_, i) => corpus.document(i));

function ingest(address) {
  const client = new IndexServiceClient(address, credentials.createInsecure());
  return new Promise((resolve, reject) => {
    const stream = client.ingestDocuments(new Metadata(), (err, res) => (err ? reject(err) : resolve(res)));
    let i = 0;
    const write = () => {
      while (i < docs.length) if (!stream.write(IngestDocumentsRequest.fromPartial({ document: { ...docs[i++], metadata: {} } }))) return void stream.once("drain", write);
      stream.end();
    };
    write();
  }).finally(() => client.close());
}

const embedder = await GgufEmbedder.load(values.embedder, { threads });
const info = { id: embedder.id, dimensions: embedder.dimensions };
await embedder.dispose();
const runs = [];
for (const workers of counts) {
  const dir = mkdtempSync(join(tmpdir(), "attr-rag-embed-bench-"));
  try {
    const store = await ChunkStore.open(join(dir, "store"), { create: true, embedder: info });
    await store.close();
    progress(`${workers} embed worker(s): starting the cluster`);
    const cluster = await LocalCluster.start({
      store: join(dir, "store"),
      workers: 1,
      modelPath: defaultModelPath(),
      workerArgs: ["--threads", "1"],
      embedderPath: values.embedder,
      embedderWorkers: workers,
      ackWaitSeconds: 30,
    });
    try {
      const started = performance.now();
      const response = await ingest(cluster.gatewayAddress);
      const seconds = (performance.now() - started) / 1000;
      if (response.failed > 0 || response.indexed !== docCount) throw new Error(`ingest with ${workers} worker(s): ${response.indexed} indexed, ${response.failed} failed of ${docCount}`);
      const jobs = cluster.embedders.map((w) => (w.stderr.match(/finished embed job/g) ?? []).length);
      runs.push({ workers, documents: docCount, chunks: response.chunksAdded, seconds, chunks_per_s: response.chunksAdded / seconds, jobs_per_worker: jobs });
      progress(`${workers} embed worker(s): ${response.chunksAdded} chunks in ${seconds.toFixed(1)} s = ${(response.chunksAdded / seconds).toFixed(1)} chunks/s; jobs per worker ${jobs.join(", ")}`);
    } finally {
      await cluster.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(
  JSON.stringify({
    embedder: info.id,
    dimensions: info.dimensions,
    threads_per_worker: threads,
    runs,
    speedup: Object.fromEntries(runs.map((r) => [String(r.workers), r.chunks_per_s / runs[0].chunks_per_s])),
    run,
  }),
);
