#!/usr/bin/env node
// Index benchmark: ingest throughput and query latency of a ChunkStore with ~50k chunks.
//
//   node tools/bench/index-bench.mjs [--chunks 50000] [--dims 512] [--queries 200] [--dir DIR] [--use-lite-sample 64]
//
// Store costs (SQLite + FTS5 + usearch) are measured with a fast hashed embedder of the same dimension as
// USE-lite, so 50k chunks ingest in minutes instead of the hours USE-lite needs on two CPU cores; USE-lite's own
// throughput and query-embedding latency are measured on a sample and reported beside them. JSON on stdout,
// progress on stderr. Needs `npm run build` first.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { describeRun } from "../../packages/engine/dist/index.js";
import { ChunkStore, UseLiteEmbedder } from "../../packages/index/dist/index.js";

const { values } = parseArgs({
  options: {
    chunks: { type: "string", default: "50000" },
    dims: { type: "string", default: "512" },
    queries: { type: "string", default: "200" },
    dir: { type: "string" },
    "use-lite-sample": { type: "string", default: "64" },
  },
});
// Read when the code was loaded, not at the end: the commit and tree state of what actually ran.
const run = describeRun(process.argv, "node tools/bench/index-bench.mjs");
const targetChunks = Number(values.chunks);
const dims = Number(values.dims);
const queryCount = Number(values.queries);
const sample = Number(values["use-lite-sample"]);
for (const [name, v] of Object.entries({ chunks: targetChunks, dims, queries: queryCount })) {
  if (!Number.isInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
}

// A Zipf-distributed vocabulary of 20,000 made-up words: a few very common, most rare, like real text, so
// BM25 postings and dense neighbourhoods have realistic sizes without shipping any corpus.
let seed = 12345;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const SYLLABLES = ["ac", "al", "ben", "car", "de", "eth", "fil", "gen", "hyd", "io", "ket", "lin", "met", "nit", "ox", "pro", "qua", "rin", "sul", "tri", "ur", "vin", "xyl", "zo"];
const VOCAB = Array.from({ length: 20000 }, (_, i) => {
  let w = "";
  for (let n = i + 1; n > 0; n = Math.floor(n / SYLLABLES.length)) w += SYLLABLES[n % SYLLABLES.length];
  return w;
});
const zipfCdf = [];
{
  let total = 0;
  for (let r = 1; r <= VOCAB.length; r++) zipfCdf.push((total += 1 / r));
  for (let i = 0; i < zipfCdf.length; i++) zipfCdf[i] /= total;
}
const word = () => {
  const u = rand();
  let lo = 0;
  let hi = zipfCdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (zipfCdf[mid] < u) lo = mid + 1;
    else hi = mid;
  }
  return VOCAB[lo];
};
const sentence = () => Array.from({ length: 8 + Math.floor(rand() * 10) }, word).join(" ") + ".";
const docChars = 4000; // ~4 chunks of ≤1000 characters each
const document = (i) => {
  let text = "";
  while (text.length < docChars) text += `${sentence()} ${text.length % 5 === 0 ? "\n\n" : ""}`;
  return { id: `doc-${i}`, title: `Document ${i}`, text, source: "bench", license: "CC0-1.0" };
};

function hashedEmbed(text) {
  const v = new Float32Array(dims);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 0x811c9dc5;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193) >>> 0;
    v[h % dims] += h & 1 ? 1 : -1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}
const embed = async (texts) => texts.map(hashedEmbed);

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const dir = values.dir ?? mkdtempSync(join(tmpdir(), "attr-rag-index-bench-"));
const store = await ChunkStore.open(join(dir, "store"), { create: true, embedder: { id: `bench-hashed-${dims}`, dimensions: dims }, embed });
let chunks = store.stats().chunks;
let docs = 0;
const t0 = performance.now();
while (chunks < targetChunks) {
  const r = await store.upsertDocument(document(docs++), embed);
  chunks += r.chunkCount;
  if (docs % 500 === 0) process.stderr.write(`ingest: ${chunks}/${targetChunks} chunks\n`);
}
await store.flush();
const ingestSeconds = (performance.now() - t0) / 1000;

const queries = Array.from({ length: queryCount }, () => sentence().split(" ").slice(0, 6).join(" "));
async function latencies(mode, concurrency) {
  const times = [];
  let next = 0;
  async function client() {
    while (next < queries.length) {
      const q = queries[next++];
      // Issued now; the yield lets the other clients' queued requests run first, as they would on one event
      // loop, so the latency includes waiting for them (searches are synchronous and do not overlap).
      const start = performance.now();
      await new Promise((r) => setImmediate(r));
      if (mode === "bm25") store.searchBm25(q, { k: 30 });
      else if (mode === "dense") store.searchDense(hashedEmbed(q), { k: 30 });
      else store.searchHybrid(q, hashedEmbed(q), { k: 30 });
      times.push(performance.now() - start);
    }
  }
  const wall = performance.now();
  await Promise.all(Array.from({ length: concurrency }, client));
  const seconds = (performance.now() - wall) / 1000;
  return { p50_ms: percentile(times, 50), p99_ms: percentile(times, 99), qps: queries.length / seconds };
}
const query = {};
for (const mode of ["bm25", "dense", "hybrid"]) {
  query[mode] = { c1: await latencies(mode, 1), c8: await latencies(mode, 8) };
  process.stderr.write(`queries: ${mode} done\n`);
}
const stats = store.stats();
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
  for (const text of queries.slice(0, 20)) {
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
    ingest: { seconds: ingestSeconds, chunks_per_s: stats.chunks / ingestSeconds, note: "hashed embedder: store cost only" },
    query,
    use_lite: useLite,
    run,
  }),
);
