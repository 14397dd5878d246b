#!/usr/bin/env node
// Index benchmark: ingest throughput and query latency of a ChunkStore, to a million chunks.
//
//   node packages/bench/scripts/index-bench.mjs [--chunks 50000] [--dims 512] [--queries 200] [--exhaustive-queries 50]
//                                    [--search-threads 2] [--ingest-group 32] [--dir DIR] [--use-lite-sample 64]
//                                    [--quantization f32|f16]   (default: a new store's default)
//
// Store costs (SQLite + FTS5 + usearch) are measured with a fast hashed embedder of the same dimension as
// USE-lite, so large stores ingest in minutes instead of the hours USE-lite needs on two CPU cores; USE-lite's
// own throughput and query-embedding latency are measured on a sample and reported beside them. Two kinds of
// query: 6 corpus words ("words"), and questions as people write them, with function words and common words
// ("questions"). BM25 is the exact top-k (the default); FTS5's exhaustive ranking of the same queries is
// measured beside it (on the first --exhaustive-queries of each kind: at 1 M chunks it takes about a second
// each). Query vectors are made before timing: hybrid excludes query embedding. Ingest is reported per
// 10% of the target as well as overall, in groups of --ingest-group documents per store transaction (the index
// service's IngestDocuments stream writes up to 32 documents that arrived together in one). BM25 runs on --search-threads threads, as the index service runs it. JSON on stdout, progress on stderr. Needs `npm run build` first.
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { describeRun } from "@attr-rag/bench";
import { ChunkStore, UseLiteEmbedder } from "@attr-rag/index";
import { hashedEmbed, syntheticCorpus } from "./synthetic-corpus.mjs";

const { values } = parseArgs({
  options: {
    chunks: { type: "string", default: "50000" },
    dims: { type: "string", default: "512" },
    queries: { type: "string", default: "200" },
    "exhaustive-queries": { type: "string", default: "50" },
    "search-threads": { type: "string", default: "2" },
    "ingest-group": { type: "string", default: "32" },
    dir: { type: "string" },
    "use-lite-sample": { type: "string", default: "64" },
    quantization: { type: "string" },
  },
});
// Read when the code was loaded, not at the end: the commit and tree state of what actually ran.
const run = describeRun(process.argv, "node packages/bench/scripts/index-bench.mjs");
const targetChunks = Number(values.chunks);
const dims = Number(values.dims);
const queryCount = Number(values.queries);
const exhaustiveCount = Number(values["exhaustive-queries"]);
const searchThreads = Number(values["search-threads"]);
const sample = Number(values["use-lite-sample"]);
const ingestGroup = Number(values["ingest-group"]);
for (const [name, v] of Object.entries({ chunks: targetChunks, dims, queries: queryCount, "ingest-group": ingestGroup })) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
}

const { document, words, question } = syntheticCorpus();
const embed = async (texts) => texts.map((t) => hashedEmbed(t, dims));

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const dir = values.dir ?? mkdtempSync(join(tmpdir(), "attr-rag-index-bench-"));
if (values.quantization !== undefined && !["f32", "f16"].includes(values.quantization)) throw new Error("--quantization must be f32 or f16");
const store = await ChunkStore.open(join(dir, "store"), {
  create: true,
  embedder: { id: `bench-hashed-${dims}`, dimensions: dims },
  embed,
  ...(values.quantization ? { quantization: values.quantization } : {}),
});
let chunks = store.stats().chunks;
let docs = 0;
const t0 = performance.now();
const windows = [];
let windowStart = { at: t0, chunks };
const step = Math.max(1, Math.floor(targetChunks / 10));
while (chunks < targetChunks) {
  const results = await store.upsertDocuments(Array.from({ length: ingestGroup }, () => document(docs++)), embed);
  for (const r of results) chunks += r.chunkCount;
  if (chunks - windowStart.chunks >= step || chunks >= targetChunks) {
    const now = performance.now();
    windows.push({ upto_chunks: chunks, chunks_per_s: (chunks - windowStart.chunks) / ((now - windowStart.at) / 1000) });
    process.stderr.write(`ingest: ${chunks}/${targetChunks} chunks, ${Math.round(windows.at(-1).chunks_per_s)} chunks/s\n`);
    windowStart = { at: now, chunks };
  }
}
await store.flush();
const ingestSeconds = (performance.now() - t0) / 1000;

const kinds = {
  words: Array.from({ length: queryCount }, words),
  questions: Array.from({ length: queryCount }, question),
};
const vectors = new Map(Object.values(kinds).flat().map((q) => [q, hashedEmbed(q, dims)]));
async function latencies(queries, search, concurrency) {
  const times = [];
  let next = 0;
  async function client() {
    while (next < queries.length) {
      const q = queries[next++];
      // Issued now; the yield lets the other clients' queued requests run first, as they would on one event
      // loop, so the latency includes waiting for them (searches are synchronous and do not overlap).
      const start = performance.now();
      await new Promise((r) => setImmediate(r));
      await search(q);
      times.push(performance.now() - start);
    }
  }
  const wall = performance.now();
  await Promise.all(Array.from({ length: concurrency }, client));
  const seconds = (performance.now() - wall) / 1000;
  return { queries: queries.length, p50_ms: percentile(times, 50), p99_ms: percentile(times, 99), qps: queries.length / seconds };
}
// As the index service searches: BM25 on --search-threads worker threads (searchBm25Async), dense here.
await store.useSearchThreads(searchThreads);
const MODES = {
  bm25: (q) => store.searchBm25Async(q, { k: 30 }),
  dense: (q) => store.searchDense(vectors.get(q), { k: 30 }),
  hybrid: (q) => store.searchHybridAsync(q, vectors.get(q), { k: 30 }),
  bm25_exhaustive: (q) => store.searchBm25Async(q, { k: 30, bm25Method: "exhaustive" }),
  hybrid_exhaustive: (q) => store.searchHybridAsync(q, vectors.get(q), { k: 30, bm25Method: "exhaustive" }),
};
const query = {};
for (const [kind, queries] of Object.entries(kinds)) {
  query[kind] = {};
  for (const [mode, search] of Object.entries(MODES)) {
    const exhaustive = mode.endsWith("_exhaustive");
    const list = exhaustive ? queries.slice(0, exhaustiveCount) : queries;
    if (list.length === 0) continue;
    query[kind][mode] = { c1: await latencies(list, search, 1), ...(exhaustive ? {} : { c8: await latencies(list, search, 8) }) };
    process.stderr.write(`queries: ${kind} ${mode} p50 ${query[kind][mode].c1.p50_ms.toFixed(2)} ms\n`);
  }
}
// What the exact top-k saves: per query, the postings FTS5 still scores (the phrases it is given) against all
// the query's postings (what the exhaustive ranking scores). Read on the main connection, synchronously.
const postings = {};
for (const [kind, queries] of Object.entries(kinds)) {
  const ratios = [];
  const scored = [];
  for (const q of queries) {
    store.searchBm25(q, { k: 30 });
    const t = store.lastBm25Trace.postings;
    if (t.all > 0) ratios.push(t.scored / t.all);
    scored.push(t.scored);
  }
  postings[kind] = { scored_p50: percentile(scored, 50), scored_p99: percentile(scored, 99), scored_share_p50: percentile(ratios, 50) };
}
const stats = store.stats();
const bytesOnDisk = readdirSync(join(dir, "store")).reduce((n, f) => n + statSync(join(dir, "store", f)).size, 0);
await store.close();

let useLite = null;
if (sample > 0) {
  const embedder = new UseLiteEmbedder();
  const texts = Array.from({ length: sample }, () => document(0).text.slice(0, 1000));
  await embedder.embed(texts.slice(0, 2));
  const ts = performance.now();
  await embedder.embed(texts);
  const chunksPerSecond = sample / ((performance.now() - ts) / 1000);
  const q = [];
  for (const text of kinds.questions.slice(0, 20)) {
    const s = performance.now();
    await embedder.embed([text]);
    q.push(performance.now() - s);
  }
  await embedder.dispose();
  useLite = { chunks_per_s: chunksPerSecond, query_embed_p50_ms: percentile(q, 50), query_embed_p99_ms: percentile(q, 99) };
}
if (!values.dir) rmSync(dir, { recursive: true, force: true });

console.log(
  JSON.stringify({
    chunks: stats.chunks,
    documents: stats.documents,
    dimensions: dims,
    quantization: stats.quantization,
    search_threads: searchThreads,
    bytes_on_disk: bytesOnDisk,
    ingest: { seconds: ingestSeconds, chunks_per_s: stats.chunks / ingestSeconds, group: ingestGroup, windows, note: "hashed embedder: store cost only" },
    query,
    bm25_postings: postings,
    use_lite: useLite,
    run,
  }),
);
