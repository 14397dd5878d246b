#!/usr/bin/env node
// Searches through the gateway while a large ingest runs through it: does a search wait behind the ingest?
//
//   node packages/bench/scripts/search-under-ingest.mjs [--docs 10000] [--clients 100] [--seed-docs 2000] [--doc-chars 150]
//                                            [--embedder gguf:examples/models/stories260K.gguf] [--mode bm25|hybrid]
//
// An embedded gateway (attr-rag serve) over a fresh store: --seed-docs documents first, then bursts of --clients
// searches at once (every 500 ms), 20 bursts idle for the idle latencies, then bursts for as long as one
// IngestDocuments stream carries --docs more documents. Every search
// is timed from the client; an error is counted and named. The embedder is the store's: the default, a real
// GGUF model run through llama.cpp (stories260K, tiny), with short documents (--doc-chars: one chunk each),
// keeps a 10,000-document ingest to minutes on two cores.
// JSON on stdout, progress on stderr. Needs `npm run build` first.
import { credentials, Metadata } from "@grpc/grpc-js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { IndexServiceClient, IngestDocumentsRequest, RetrievalMode } from "@attr-rag/contracts";
import { defaultModelPath } from "@attr-rag/engine";
import { describeRun } from "@attr-rag/bench";
import { loadConfig, Runtime, startGatewayServer } from "@attr-rag/gateway";
import { ChunkStore, createEmbedder } from "@attr-rag/index";
import { syntheticCorpus } from "./synthetic-corpus.mjs";

const { values } = parseArgs({
  options: {
    docs: { type: "string", default: "10000" },
    clients: { type: "string", default: "100" },
    "seed-docs": { type: "string", default: "2000" },
    "doc-chars": { type: "string", default: "150" },
    embedder: { type: "string", default: `gguf:${defaultModelPath()}` },
    mode: { type: "string", default: "bm25" },
  },
});
const run = describeRun(process.argv, "node packages/bench/scripts/search-under-ingest.mjs");
const docCount = Number(values.docs);
const clients = Number(values.clients);
const seedDocs = Number(values["seed-docs"]);
const docChars = Number(values["doc-chars"]);
for (const [name, v] of Object.entries({ docs: docCount, clients, "seed-docs": seedDocs, "doc-chars": docChars })) {
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
const corpus = syntheticCorpus(4242, docChars);
const documents = (from, n) => Array.from({ length: n }, (_, i) => corpus.document(from + i));

// The store is made with the embedder first: the gateway opens stores, it does not create them.
{
  const embedder = await createEmbedder(values.embedder);
  const store = await ChunkStore.open(join(dir, "store"), { create: true, embedder: { id: embedder.id, dimensions: embedder.dimensions } });
  await store.close();
  await embedder.dispose();
}
const config = loadConfig({ overrides: { store: join(dir, "store"), model: defaultModelPath(), embedder: values.embedder, threads: 1, sequences: 2, contextSize: 2048 } });
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
        const ok = stream.write(IngestDocumentsRequest.fromPartial({ document: { ...docs[i++], metadata: {} } }));
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

/**
 * Bursts of `clients` searches at once (all in flight together), one burst every `intervalMs`, until `until()`
 * says stop (at least `min` bursts): every latency and error. Bursts rather than clients searching back to back,
 * which on two cores would take all the CPU and leave the ingest none.
 */
async function searchBursts(until, min, intervalMs = 500) {
  const times = [];
  const errors = [];
  for (let burst = 0; burst < min || !until(); burst++) {
    const started = performance.now();
    await Promise.all(
      Array.from({ length: clients }, async () => {
        const q = corpus.question();
        const start = performance.now();
        try {
          await search(q);
          times.push(performance.now() - start);
        } catch (err) {
          errors.push(`${err.code ?? ""} ${err.details ?? err.message}`);
        }
      }),
    );
    const left = intervalMs - (performance.now() - started);
    if (left > 0) await new Promise((r) => setTimeout(r, left));
  }
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
  progress(`idle: 20 bursts of ${clients} searches at once`);
  const idle = summary(await searchBursts(() => true, 20));
  progress(`idle p50 ${idle.p50_ms.toFixed(1)} ms, p99 ${idle.p99_ms.toFixed(1)} ms`);

  progress(`ingesting ${docCount} documents while ${clients} clients search`);
  let ingesting = true;
  const started = performance.now();
  const ingested = ingest(documents(seedDocs, docCount)).finally(() => (ingesting = false));
  const [response, busy] = await Promise.all([ingested, searchBursts(() => !ingesting, 1)]);
  const ingestSeconds = (performance.now() - started) / 1000;
  const during = summary(busy);
  progress(`during ingest p50 ${during.p50_ms.toFixed(1)} ms, p99 ${during.p99_ms.toFixed(1)} ms, max ${during.max_ms.toFixed(1)} ms, ${during.errors} errors`);
  console.log(
    JSON.stringify({
      mode: values.mode,
      clients,
      embedder: values.embedder.replace(/^gguf:.*\//, "gguf:"),
      seed_documents: seedDocs,
      document_chars: docChars,
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
