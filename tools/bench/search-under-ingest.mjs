#!/usr/bin/env node
// Searches through the gateway while a large ingest runs through it: does a search wait behind the ingest?
//
//   node tools/bench/search-under-ingest.mjs [--docs 10000] [--clients 100] [--seed-docs 2000]
//                                            [--embedder gguf:examples/models/stories260K.gguf] [--mode bm25|hybrid]
//
// An embedded gateway (attr-rag serve) over a fresh store: --seed-docs documents first, then --clients clients
// each searching in a loop, idle (the same number of searches as clients × 10) for the idle latencies; then the
// same clients searching in a loop while one IngestDocuments stream carries --docs more documents. Every search
// is timed from the client; an error is counted and named. The embedder is the store's: the default, a real
// GGUF model run through llama.cpp (stories260K, tiny), keeps a 10,000-document ingest to minutes on two cores.
// JSON on stdout, progress on stderr. Needs `npm run build` first.
import { credentials, Metadata } from "@grpc/grpc-js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { IndexServiceClient, RetrievalMode } from "../../packages/contracts/dist/index.js";
import { defaultModelPath, describeRun } from "../../packages/engine/dist/index.js";
import { loadConfig, Runtime, startGatewayServer } from "../../packages/gateway/dist/index.js";
import { ChunkStore, createEmbedder } from "../../packages/index/dist/index.js";
import { syntheticCorpus } from "./synthetic-corpus.mjs";

const { values } = parseArgs({
  options: {
    docs: { type: "string", default: "10000" },
    clients: { type: "string", default: "100" },
    "seed-docs": { type: "string", default: "2000" },
    embedder: { type: "string", default: `gguf:${defaultModelPath()}` },
    mode: { type: "string", default: "bm25" },
  },
});
const run = describeRun(process.argv, "node tools/bench/search-under-ingest.mjs");
const docCount = Number(values.docs);
const clients = Number(values.clients);
const seedDocs = Number(values["seed-docs"]);
for (const [name, v] of Object.entries({ docs: docCount, clients, "seed-docs": seedDocs })) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
}
const MODES = { bm25: RetrievalMode.RETRIEVAL_MODE_BM25, hybrid: RetrievalMode.RETRIEVAL_MODE_HYBRID };
if (!(values.mode in MODES)) throw new Error(`--mode must be bm25 or hybrid, got ${values.mode}`);
const progress = (line) => process.stderr.write(`search-under-ingest: ${line}\n`);
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const dir = mkdtempSync(join(tmpdir(), "attr-rag-search-under-ingest-"));
const corpus = syntheticCorpus(4242, 2000);
const documents = (from, n) => Array.from({ length: n }, (_, i) => corpus.document(from + i));

// The store is made with the embedder first: the gateway opens stores, it does not create them.
{
  const embedder = await createEmbedder(values.embedder);
  const store = await ChunkStore.open(join(dir, "store"), { create: true, embedder: { id: embedder.id, dimensions: embedder.dimensions } });
  await store.close();
  await embedder.dispose();
}
const config = loadConfig({ overrides: { store: join(dir, "store"), model: defaultModelPath(), embedder: values.embedder, threads: 1, sequences: 1 } });
const runtime = await Runtime.open(config);
const server = await startGatewayServer({ runtime, log: () => {} });
const client = new IndexServiceClient(server.address, credentials.createInsecure(), { "grpc.max_receive_message_length": 64 << 20 });

function ingest(docs) {
  return new Promise((resolve, reject) => {
    const stream = client.ingestDocuments(new Metadata(), (err, res) => (err ? reject(err) : resolve(res)));
    let i = 0;
    // Written as the stream drains, as a client that respects flow control does.
    const write = () => {
      while (i < docs.length) {
        const ok = stream.write({ document: { ...docs[i++], metadata: {} } });
        if (!ok) return void stream.once("drain", write);
      }
      stream.end();
    };
    write();
  });
}
const search = (query) =>
  new Promise((resolve, reject) =>
    client.search({ query, options: { k: 30, mode: MODES[values.mode] }, includeQueryEmbedding: false }, (err, res) => (err ? reject(err) : resolve(res))),
  );

/** `clients` loops of searches until `until()` says stop (at least `min` searches in all); every latency and error. */
async function searchLoops(until, min) {
  const times = [];
  const errors = [];
  let issued = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (issued < min || !until()) {
        issued++;
        const q = corpus.question();
        const start = performance.now();
        try {
          await search(q);
          times.push(performance.now() - start);
        } catch (err) {
          errors.push(`${err.code ?? ""} ${err.details ?? err.message}`);
        }
      }
    }),
  );
  return { times, errors };
}
const summary = ({ times, errors }) => ({
  searches: times.length,
  errors: errors.length,
  first_errors: [...new Set(errors)].slice(0, 5),
  p50_ms: percentile(times, 50),
  p99_ms: percentile(times, 99),
  max_ms: Math.max(...times),
});

try {
  progress(`seeding ${seedDocs} documents`);
  await ingest(documents(0, seedDocs));
  progress(`idle: ${clients} clients, ${clients * 10} searches`);
  const idle = summary(await searchLoops(() => true, clients * 10));
  progress(`idle p50 ${idle.p50_ms.toFixed(1)} ms, p99 ${idle.p99_ms.toFixed(1)} ms`);

  progress(`ingesting ${docCount} documents while ${clients} clients search`);
  let ingesting = true;
  const started = performance.now();
  const ingested = ingest(documents(seedDocs, docCount)).finally(() => (ingesting = false));
  const [response, busy] = await Promise.all([ingested, searchLoops(() => !ingesting, clients)]);
  const ingestSeconds = (performance.now() - started) / 1000;
  const during = summary(busy);
  progress(`during ingest p50 ${during.p50_ms.toFixed(1)} ms, p99 ${during.p99_ms.toFixed(1)} ms, max ${during.max_ms.toFixed(1)} ms, ${during.errors} errors`);
  console.log(
    JSON.stringify({
      mode: values.mode,
      clients,
      embedder: values.embedder.replace(/^gguf:.*\//, "gguf:"),
      seed_documents: seedDocs,
      ingest: { documents: docCount, indexed: response.indexed, failed: response.failed, chunks: response.chunksAdded, seconds: ingestSeconds, chunks_per_s: response.chunksAdded / ingestSeconds },
      idle,
      during_ingest: during,
      slowest_vs_idle_p99: during.max_ms / idle.p99_ms,
      run,
    }),
  );
} finally {
  client.close();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
}
