#!/usr/bin/env node
// The README's measured tables are rendered from the raw JSON of the runs in bench/results/ (each with the
// command, commit and machine that produced it), never typed by hand:
//
//   node packages/bench/render/readme-tables.mjs          rewrite the generated blocks of README.md and docs/*.md
//   node packages/bench/render/readme-tables.mjs --check  exit 1 if any of them differs from what the JSON renders
//
// A block is the text between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`, in exactly one of
// README.md and docs/*.md (it moves with its section); packages/cli's readmeTables test fails whenever the
// documents and bench/results/ disagree.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { demoProgressBlock, demoResultBlock, demoSentencesBlock, demoShortBlock } from "./demo-transcript.mjs";
import { describeRunRecord } from "./run-provenance.mjs";

export const REPO_ROOT = resolve(import.meta.dirname, "../../..");
export const RESULTS_DIR = join(REPO_ROOT, "bench/results");

/** Each block: the result files it renders (in bench/results/) and how. */
export const BLOCKS = {
  "occlusion-bench": { files: ["occlusion-bench-f16.json", "occlusion-bench-q8_0.json"], render: occlusionBlock },
  "occlusion-qwen2-0.5b": { files: ["occlusion-qwen2-0.5b-q8_0.json"], render: occlusionBlock },
  "occlusion-stories260K": { files: ["occlusion-stories260K.json"], render: occlusionBlock },
  "occlusion-screen-k2": { files: ["occlusion-bench-f16-screen-k2.json"], render: occlusionBlock },
  // The same small workload on the CPU backend and on Mesa's lavapipe (software Vulkan, every layer offloaded).
  "occlusion-lavapipe": { files: ["occlusion-stories260K-cpu-small.json", "occlusion-stories260K-lavapipe.json"], render: occlusionBlock },
  // A real GPU (CUDA on an H200, every layer offloaded) beside the 2-core CPU runs of the same workloads.
  "occlusion-cuda": {
    files: ["occlusion-bench-f16.json", "occlusion-bench-f16-cuda-h200.json", "occlusion-qwen2-0.5b-q8_0.json", "occlusion-qwen2-0.5b-q8_0-cuda-h200.json"],
    render: occlusionBlock,
  },
  "occlusion-fidelity": {
    files: ["occlusion-stories260K.json", "occlusion-bench-f16.json", "occlusion-bench-q8_0.json", "occlusion-qwen2-0.5b-q8_0.json"],
    render: fidelityBlock,
  },
  retrieval: {
    // Per public set: the run with the current default fusion, then the run before it (RRF, BM25 weight 4).
    files: ["retrieval-chemlitqa-train.json", "retrieval-chemlitqa-train-rrf4.json", "retrieval-chemex-like-train.json", "retrieval-chemex-like-train-rrf4.json"],
    render: retrievalBlock,
  },
  "retrieval-fusion": { files: ["retrieval-tune-chemlitqa-train.json", "retrieval-tune-chemex-like-train.json"], render: fusionTuneBlock },
  "index-bench": { files: ["index-bench.json"], render: indexBlock },
  "index-bench-scale": { files: ["index-bench-100k.json", "index-bench-1m.json"], render: indexScaleBlock },
  "search-under-ingest": { files: ["search-under-ingest.json"], render: searchUnderIngestBlock },
  "embed-workers": { files: ["embed-workers-stories260K.json"], render: embedWorkersBlock },
  "cluster-bench": { files: ["cluster-stories260K.json"], render: clusterBlock },
  "shards-bench": { files: ["shards-bench.json"], render: shardsBlock },
  // Engine threads 1 (a core left for the scraper and the collector, as when they run elsewhere), then 2.
  // and what one scrape and one span cost (packages/bench/scripts/telemetry-unit-cost.mjs), the bound on the difference.
  "telemetry-bench": { files: ["telemetry-overhead-stories260K.json", "telemetry-overhead-stories260K-threads2.json", "telemetry-unit-cost.json"], render: telemetryBlock },
  // Sentence-level attribution's cost in the occlusion stage, on the bench model and stories260K.
  "sentences-bench": { files: ["sentences-bench-f16.json", "sentences-stories260K.json"], render: sentencesBlock },
  "batch-bench": { files: ["batch-stories260K.json"], render: batchBlock },
  // Where output rows are read (device picks against the host path), then the KV layouts and flash attention.
  "peers-bench": { files: ["peers-bench-f16.json", "peers-stories260K.json", "peers-stories260K-lavapipe.json"], render: peersBlock },
  "engine-rows": { files: ["throughput-bench-f16-sampling.json", "throughput-bench-f16-kv.json"], render: engineRowsBlock },
  "throughput-bench": { files: ["throughput-stories260K.json", "throughput-bench-f16.json", "throughput-bench-f16-cuda-h200.json", "throughput-qwen2-0.5b-f16-cuda-h200.json"], render: throughputBlock },
  "attribution-eval": { files: ["eval-attribution-stories260K.json", "eval-attribution-qwen2-tiny.json"], render: attributionEvalBlock },
  "attribution-bench": { files: ["attribution-bench-f16.json"], render: attributionBenchBlock },
  // `attr-rag soak`'s hour under faults: what it did, what failed on purpose, and what the checker found.
  soak: { files: ["soak-60min.json"], render: soakBlock },
  // The demo's own output, from one recorded run (packages/bench/scripts/demo-run.mjs).
  "demo-transcript": { files: ["demo-stories260K.json"], render: demoShortBlock },
  "demo-progress": { files: ["demo-stories260K.json"], render: demoProgressBlock },
  "demo-result": { files: ["demo-stories260K.json"], render: demoResultBlock },
  "demo-sentences": { files: ["demo-stories260K.json"], render: demoSentencesBlock },
};

/** Reads a result file; `load` can be swapped (tests change numbers to see the check fail). */
export function loadResult(file) {
  return JSON.parse(readFileSync(join(RESULTS_DIR, file), "utf8"));
}

/** The documents that may hold generated blocks, relative to the repository root. */
export function docFiles() {
  const docs = readdirSync(join(REPO_ROOT, "docs")).filter((f) => f.endsWith(".md")).sort();
  return ["README.md", ...docs.map((f) => `docs/${f}`)];
}

/**
 * A document's text with each generated block it holds replaced by what its results render; links to the
 * result files are relative to the document (`prefix`: "../" under docs/). With `every`, a missing block is
 * an error (the single-document form the tests of this file use).
 */
export function renderReadme(readme, load = loadResult, { prefix = "", every = true } = {}) {
  let out = readme;
  for (const [name, block] of Object.entries(BLOCKS)) {
    const open = `<!-- generated:${name} -->`;
    const close = `<!-- /generated:${name} -->`;
    const start = out.indexOf(open);
    const end = out.indexOf(close);
    if (start < 0 && !every) continue;
    if (start < 0 || end < start) throw new Error(`the document has no ${open} … ${close} block`);
    const results = block.files.map((file) => ({ file, data: load(file), prefix }));
    out = `${out.slice(0, start + open.length)}\n${block.render(results).trim()}\n${out.slice(end)}`;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------- renderers

const fixed = (x, digits) => (x === null || x === undefined ? "–" : Number(x).toFixed(digits));
const thousands = (n) => Math.round(n).toLocaleString("en-US");
const link = (file, prefix = "") => `[${file}](${prefix}bench/results/${file})`;

/** One line per result: what ran, where, when. */
function provenance(results) {
  return results
    .map(({ file, data, prefix }) => `- ${link(file, prefix)}: ${describeRunRecord(file, data)}`)
    .join("\n");
}

/** screen's entries say how many sets it regenerated; the other strategies' names stand alone. */
function screenLabel(name, s) {
  return s.regenerated === undefined ? name : `${name} (regenerated ${s.regenerated} of ${s.regenerated + s.screened})`;
}

function occlusionBlock(results) {
  const rows = [];
  const notes = [];
  for (const { data } of results) {
    // Runs that recorded their backend say it: a software Vulkan device's numbers must never read as a GPU's.
    const backend = data.run.backend;
    const model = backend ? `${basename(data.model)}, ${backend.label}` : basename(data.model);
    const naive = data.strategies.naive;
    notes.push(
      `${backend ? `${backend.label}${backend.devices.length > 0 ? ` (${backend.devices.join(", ")}, gpu layers ${backend.gpu_layers})` : ""}: ` : ""}\`${basename(data.model)}\` (${(data.model_parameters / 1e6).toFixed(1)} M parameters): ${data.n_sets} sets, ${data.prompt_tokens}-token prompt, ` +
        `${data.max_tokens} new tokens; A_full alone ${fixed(data.single.wall_ms / 1000, 1)} s (${thousands(data.single.tokens_evaluated)} tokens); ` +
        agreement(data),
    );
    for (const [name, s] of Object.entries(data.strategies)) {
      const ratio = (x, of) => (naive ? ` (${fixed(x / of, 2)})` : "");
      const identical = s.sequences_identical === null ? (name === "naive" ? "reference" : "not compared") : `${s.sequences_identical}/${s.sequences_total}`;
      rows.push(
        `| ${model} | ${s.approximate ? `${screenLabel(name, s)} (APPROXIMATE)` : name} | ${fixed(s.wall_ms / 1000, 1)} | ${naive ? `${fixed(naive.wall_ms / s.wall_ms, 2)}×` : "–"} | ` +
          `${thousands(s.tokens_evaluated)}${ratio(s.tokens_evaluated, naive?.tokens_evaluated)} | ${thousands(s.tokens_reused)} | ${thousands(s.draft_accepted)} | ` +
          `${thousands(s.decode_steps)}${ratio(s.decode_steps, naive?.decode_steps)} | ${identical} |`,
      );
    }
  }
  return [
    ...notes.map((n) => `- ${n}`),
    "",
    "| model | strategy | wall s | vs naive | tokens evaluated (÷ naive) | reused | drafts accepted | decode steps (÷ naive) | identical to naive |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    provenance(results),
  ].join("\n");
}

/** What the comparison with naive found, without quoting a margin when nothing diverged. */
function agreement(data) {
  if (data.max_divergence_margin === null) return "answers not compared with naive.";
  const compared = Object.entries(data.strategies).filter(([name, s]) => name !== "naive" && !s.approximate);
  if (compared.every(([, s]) => s.first_divergences.length === 0)) return "every exact strategy's answers token-identical to naive's.";
  return `largest naive margin where an exact strategy's answer first differs from naive's: ${fixed(data.max_divergence_margin, 3)} (a near-tie when ≤ 0.1).`;
}

/**
 * The approximate strategies against exact, per model (tiny or synthetic models: the figures measure the
 * mechanics, not what a 7B model would do): answers, next-token distributions, α and the selection.
 */
function fidelityBlock(results) {
  const rows = [];
  for (const { data } of results) {
    const model = basename(data.model);
    const naive = data.strategies.naive;
    for (const [name, s] of Object.entries(data.strategies)) {
      if (!s.approximate) continue;
      const f = s.fidelity;
      if (!f) throw new Error(`${model}: ${name} has no fidelity (no exact strategy ran)`);
      const dAlpha = Object.values(f.mean_abs_delta_alpha);
      const meanDelta = dAlpha.reduce((a, b) => a + b, 0) / dAlpha.length;
      rows.push(
        `| ${model} | ${screenLabel(name, s)} | ${s.tail_tokens ?? "–"} | ${naive ? `${fixed(s.tokens_evaluated / naive.tokens_evaluated, 2)} / ${fixed(naive.wall_ms / s.wall_ms, 2)}×` : "–"} | ` +
          `${fixed(100 * f.occluded_identical, 0)} % | ${fixed(f.mean_first_divergence, 1)} | ${f.mean_kl === null ? "–" : f.mean_kl.toExponential(2)} | ${f.top1_agreement === null ? "–" : `${fixed(100 * f.top1_agreement, 1)} %`} | ` +
          `${fixed(meanDelta, 3)} (max ${fixed(Math.max(...dAlpha), 3)}) | ${f.selection_identical ? "yes" : `no (Jaccard ${fixed(f.kept_jaccard, 2)})`} | ${fixed(f.alpha_spearman, 2)} |`,
      );
    }
  }
  return [
    "| model | strategy | tail tokens recomputed | tokens ÷ naive / speed-up | occluded answers identical | mean first divergence (step) | mean KL | top-1 agreement | mean \\|Δα\\| (5 text metrics) | same selection | α Spearman |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    provenance(results),
  ].join("\n");
}

/** Runs made before eval retrieval reported its fusion used the default of the time: RRF, k 60, BM25 weight 4. */
const FUSION_BEFORE_RECORDING = { method: "rrf", rrfK: 60, bm25Weight: 4 };

function fusionLabel(data) {
  const f = data.fusion ?? FUSION_BEFORE_RECORDING;
  const name = f.method === "rrf" ? `RRF k ${f.rrfK}, BM25 weight ${f.bm25Weight}` : `convex λ ${f.bm25Weight}`;
  return f.from === "store" ? `${name} (tuned store)` : name;
}

/**
 * One table for the public sets: each set's current run (`retrieval-SET.json`) and the run before the fusion
 * changed (`retrieval-SET-rrf4.json`). Hybrid gets a row per run; dense and BM25 do not depend on the fusion,
 * so they get one row, or one per run if the two runs disagree.
 */
function retrievalBlock(results) {
  const ks = ["1", "5", "10", "30"];
  const rows = [];
  const byDataset = new Map();
  for (const { file, data } of results) {
    const before = file.endsWith("-rrf4.json");
    const dataset = file.replace(/^retrieval-/, "").replace(/(-rrf4)?\.json$/, "");
    byDataset.set(dataset, { ...byDataset.get(dataset), [before ? "before" : "now"]: data });
  }
  const cells = (s) => `${ks.map((k) => fixed(s.recall[k], 3)).join(" | ")} | ${fixed(s.mrr, 3)} | ${fixed(s["ndcg@10"], 3)}`;
  for (const [dataset, { now, before }] of byDataset) {
    if (!now || !before) throw new Error(`retrieval: ${dataset} needs both retrieval-${dataset}.json and retrieval-${dataset}-rrf4.json`);
    let label = `${dataset} (${thousands(now.corpus)} docs, ${thousands(now.chunks)} chunks, ${now.evaluated} q)`;
    const row = (mode, fusion, s) => {
      rows.push(`| ${label} | ${mode} | ${fusion} | ${cells(s)} |`);
      label = "";
    };
    for (const [mode, s] of Object.entries(now.modes)) {
      const old = before.modes[mode];
      if (mode === "hybrid") {
        if (old) row("hybrid, before", fusionLabel(before), old);
        row("hybrid, now", fusionLabel(now), s);
      } else if (old && cells(old) !== cells(s)) {
        row(`${mode}, before`, "–", old);
        row(`${mode}, now`, "–", s);
      } else row(mode, "–", s);
    }
  }
  return [
    "| dataset | mode | fusion | R@1 | R@5 | R@10 | R@30 | MRR | nDCG@10 |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    provenance(results),
  ].join("\n");
}

/**
 * What `eval retrieval --tune` found on each set (on a fresh copy of the store, so "before" is the library
 * default): BM25 and dense alone, the old and the current default, the best of each method, and the convex
 * λ range that stays within 0.01 nDCG@10 of the better single ranking.
 */
function fusionTuneBlock(results) {
  const label = (f) => (f.method === "rrf" ? `RRF k ${f.rrfK}, BM25 weight ${f.bm25Weight}` : `convex λ ${f.bm25Weight}`);
  const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
  const rows = [];
  const notes = [];
  for (const { file, data } of results) {
    const dataset = file.replace(/^retrieval-tune-/, "").replace(/\.json$/, "");
    const { tune, modes } = data;
    const single = Math.max(modes.bm25["ndcg@10"], modes.dense["ndcg@10"]);
    const find = (f) => tune.grid.find((g) => same(g.fusion, f));
    const bestOf = (method) => tune.grid.find((g) => g.fusion.method === method);
    let first = `${dataset} (${tune.questions} q)`;
    const row = (what, fusion, ndcg, recall) => {
      const delta = ndcg - single;
      rows.push(`| ${first} | ${what} | ${fusion} | ${fixed(ndcg, 4)} | ${delta >= 0 ? "+" : ""}${fixed(delta, 4)} | ${fixed(recall, 3)} |`);
      first = "";
    };
    row("BM25 alone", "–", modes.bm25["ndcg@10"], modes.bm25.recall["30"]);
    row("dense alone", "–", modes.dense["ndcg@10"], modes.dense.recall["30"]);
    const old = find({ method: "rrf", rrfK: 60, bm25Weight: 4 });
    if (old) row("old default", label(old.fusion), old["ndcg@10"], old["recall@30"]);
    row("library default", label(tune.before.fusion), tune.before["ndcg@10"], tune.before["recall@30"]);
    for (const method of ["rrf", "convex"]) {
      const best = bestOf(method);
      row(best === tune.grid[0] ? `best ${method === "rrf" ? "RRF" : "convex"} (--tune's choice)` : `best ${method === "rrf" ? "RRF" : "convex"}`, label(best.fusion), best["ndcg@10"], best["recall@30"]);
    }
    const within = tune.grid
      .filter((g) => g.fusion.method === "convex" && g["ndcg@10"] >= single - 0.01 - 1e-12)
      .map((g) => g.fusion.bm25Weight)
      .sort((a, b) => a - b);
    notes.push(`${dataset}: convex λ within 0.01 of the better single ranking: ${within.length ? within.map((x) => fixed(x, 2)).join(", ") : "none"}.`);
  }
  return [
    `Grid: RRF with BM25 weight 1–32 × k 10, 30, 60 and convex λ 0–1 in steps of 0.05 (${results[0].data.tune.grid_size} fusions), scored on the same candidates hybrid fetches.`,
    "",
    "| dataset | ranking | fusion | nDCG@10 | vs better of BM25 / dense | R@30 |",
    "|---|---|---|---|---|---|",
    ...rows,
    "",
    ...notes.map((n) => `- ${n}`),
    "",
    provenance(results),
  ].join("\n");
}

function indexBlock(results) {
  const [{ data }] = results;
  const u = data.use_lite;
  return [
    `${thousands(data.chunks)} chunks in ${thousands(data.documents)} synthetic documents over a Zipf vocabulary, ${data.dimensions}-d ${data.quantization ?? "f32"} vectors;`,
    `the store's own costs are measured with a fast hashed embedder. Ingest: ${fixed(data.ingest.chunks_per_s, 0)} chunks/s`,
    `(SQLite + FTS5 + usearch, ${fixed(data.ingest.seconds, 0)} s).` +
      (u ? ` USE-lite itself embeds ${fixed(u.chunks_per_s, 1)} chunks/s of 1,000 characters and a query in ${fixed(u.query_embed_p50_ms, 0)} ms (p50).` : ""),
    `Query latency in ms (k = 30, excluding query embedding), 1 and 8 concurrent clients; BM25 on ${data.search_threads} search threads.`,
    "Queries: 6 corpus words (words) and questions with function and common words (questions); exhaustive = FTS5's own ranking.",
    "",
    "| queries | mode | p50 (1) | p99 (1) | p50 (8) | p99 (8) | queries/s (8) |",
    "|---|---|---|---|---|---|---|",
    ...Object.entries(data.query).flatMap(([kind, modes]) =>
      Object.entries(modes).map(
        ([mode, q]) =>
          `| ${kind} | ${mode.replace("_", " ")} | ${fixed(q.c1.p50_ms, 1)} | ${fixed(q.c1.p99_ms, 1)} | ${q.c8 ? fixed(q.c8.p50_ms, 1) : "–"} | ${q.c8 ? fixed(q.c8.p99_ms, 1) : "–"} | ${q.c8 ? fixed(q.c8.qps, 0) : "–"} |`,
      ),
    ),
    "",
    provenance(results),
  ].join("\n");
}

/**
 * Runs with both query kinds, BM25 top-k beside FTS5's exhaustive ranking: the first result has the ingest
 * and the queries on the caller's thread, the second the queries on search threads (its ingest was skipped:
 * the store existed).
 */
function indexScaleBlock(results) {
  const runs = results.map((r) => r.data);
  const header = (d) => {
    const w = d.ingest.windows.map((x) => fixed(x.chunks_per_s, 0));
    return (
      `- **${thousands(d.chunks)} chunks** (${thousands(d.documents)} synthetic documents, ${d.dimensions}-d hashed ${d.quantization ?? "f32"} vectors, ${fixed(d.bytes_on_disk / 2 ** 20, 0)} MiB on disk): ` +
      `ingest ${fixed(d.ingest.chunks_per_s, 0)} chunks/s overall, ${d.ingest.group} documents per transaction; per tenth of the way: ${w.join(", ")} ` +
      `(slowest ${fixed(Math.min(...d.ingest.windows.map((x) => x.chunks_per_s)), 0)}).`
    );
  };
  const rows = runs.flatMap((d) =>
    Object.entries(d.query).flatMap(([kind, modes]) =>
      Object.entries(modes).map(
        ([mode, q]) =>
          `| ${thousands(d.chunks)} | ${kind} | ${mode.replace("_", " ")} | ${fixed(q.c1.p50_ms, 1)} | ${fixed(q.c1.p99_ms, 1)} | ${fixed(q.c1.qps, 1)} | ${q.c8 ? fixed(q.c8.qps, 1) : "–"} | ${q.c8 ? `${fixed(q.c8.qps / q.c1.qps, 2)}×` : "–"} |`,
      ),
    ),
  );
  return [
    "Synthetic corpus: a Zipf vocabulary with English function words. Queries: 6 corpus words (words) and questions with function and",
    `common words (questions), k = 30, excluding query embedding; BM25 on ${runs[0].search_threads} search threads, as the index service runs it.`,
    "exhaustive = FTS5 scoring every row that holds a query word (on the first queries of each kind); bm25 = the exact top-k (same results).",
    "",
    ...runs.map(header),
    "",
    "| chunks | queries | mode | p50 (1) ms | p99 (1) ms | queries/s (1) | queries/s (8) | 8 vs 1 |",
    "|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    ...runs.map((d) => `- ${summary(d)}`),
    "",
    provenance(results),
  ].join("\n");
}

function searchUnderIngestBlock(results) {
  const [{ data: d }] = results;
  const row = (label, x) => `| ${label} | ${thousands(x.searches)} | ${x.errors} | ${fixed(x.p50_ms, 1)} | ${fixed(x.p99_ms, 1)} | ${fixed(x.max_ms, 1)} |`;
  return [
    `Bursts of ${d.clients} searches at once (${d.mode}, k = 30, question-like queries) through an embedded gateway over a store of ${thousands(d.seed_documents)} documents, idle and then while one`,
    `IngestDocuments stream adds ${thousands(d.ingest.documents)} more (${thousands(d.ingest.chunks)} chunks in ${fixed(d.ingest.seconds, 1)} s, ${fixed(d.ingest.chunks_per_s, 0)} chunks/s, embedder ${d.embedder}).`,
    "",
    "| searches | count | errors | p50 ms | p99 ms | slowest ms |",
    "|---|---|---|---|---|---|",
    row("idle", d.idle),
    row("during the ingest", d.during_ingest),
    "",
    `The slowest search during the ingest took ${fixed(d.slowest_vs_idle_p99, 1)}× the idle p99.`,
    "",
    provenance(results),
  ].join("\n");
}

function embedWorkersBlock(results) {
  const [{ data: d }] = results;
  const rows = d.runs.map((r) => `| ${r.workers} | ${thousands(r.chunks)} | ${fixed(r.seconds, 1)} | ${fixed(r.chunks_per_s, 1)} | ${fixed(d.speedup[String(r.workers)], 2)}× | ${r.jobs_per_worker.join(", ")} |`);
  return [
    `Ingest through the gateway of a local cluster whose index embeds on its workers (\`${d.embedder}\`, ${d.dimensions} dimensions, ${d.threads_per_worker} thread per worker):`,
    "",
    "| embed workers | chunks | seconds | chunks/s | vs 1 worker | embed jobs per worker |",
    "|---|---|---|---|---|---|",
    ...rows,
    "",
    provenance(results),
  ].join("\n");
}

/** One run's figures in one sentence: top-k against exhaustive, the postings it still scores, 8 clients against 1. */
function summary(d) {
  const range = (xs) => `${fixed(Math.min(...xs), 1)}–${fixed(Math.max(...xs), 1)}×`;
  const speedups = Object.values(d.query).map((m) => m.bm25_exhaustive.c1.p50_ms / m.bm25.c1.p50_ms);
  const parallel = Object.values(d.query).flatMap((m) => [m.bm25.c8.qps / m.bm25.c1.qps, m.hybrid.c8.qps / m.hybrid.c1.qps]);
  const p = d.bm25_postings;
  return (
    `${thousands(d.chunks)} chunks: the exact top-k is ${range(speedups)} faster than FTS5's exhaustive ranking at the median; it still scores a median ` +
    `${thousands(p.questions.scored_p50)} postings per question (${fixed(p.questions.scored_share_p50 * 100, 1)} % of the query's) and ${thousands(p.words.scored_p50)} per ` +
    `6-word query (${fixed(p.words.scored_share_p50 * 100, 1)} %). 8 clients get ${range(parallel)} the queries/s of one (BM25 and hybrid).`
  );
}

function clusterBlock(results) {
  const [{ data }] = results;
  const s = data.settings;
  const l = data.latency;
  const one = data.throughput.find((t) => t.workers === 1);
  const two = data.speedup["2"];
  const pct = (x) => `${fixed(x * 100, 1)} %`;
  return [
    `\`${basename(data.model)}\`, k = ${s.k}, ${s.max_tokens} new tokens, ${s.threads_per_worker} engine thread per worker (and in the embedded gateway), ` +
      `${thousands(s.context_size)} KV cells per worker; latency is the median of ${s.repeats} Asks after a warm-up, throughput ${s.asks} Asks at once.`,
    "",
    "| | embedded | distributed, 1 worker | overhead |",
    "|---|---|---|---|",
    `| latency of one Ask (ms) | ${thousands(l.embedded.median_ms)} | ${thousands(l.distributed_1_worker.median_ms)} | ${thousands(l.overhead_ms)} (${pct(l.overhead_fraction)}; goal ≤ ${pct(data.goals.overhead_fraction)}) |`,
    "",
    "| workers | Asks | wall s | Asks/minute | vs 1 worker | jobs per worker |",
    "|---|---|---|---|---|---|",
    ...data.throughput.map(
      (t) =>
        `| ${t.workers} | ${t.asks} | ${fixed(t.wall_ms / 1000, 1)} | ${fixed(t.asks_per_minute, 1)} | ${one ? `${fixed(t.asks_per_minute / one.asks_per_minute, 2)}×` : "–"} | ${t.jobs_per_worker.join(", ")} |`,
    ),
    "",
    `Same final answer embedded and distributed: ${l.same_final_answer ? "yes" : "**no**"}.` +
      (two !== undefined ? ` Two single-thread workers on two cores: ${fixed(two, 2)}× one (goal ≥ ${fixed(data.goals.speedup_2_workers, 1)}×).` : ""),
    "",
    provenance(results),
  ].join("\n");
}

function shardsBlock(results) {
  const [{ data }] = results;
  const configs = [...new Set(data.latency.map((l) => l.config))];
  const modes = ["bm25", "dense", "hybrid"];
  const clients = [...new Set(data.latency.map((l) => l.clients))].sort((a, b) => a - b);
  const at = (config, mode, c) => data.latency.find((l) => l.config === config && l.mode === mode && l.clients === c);
  const pct = (x) => `${x >= 0 ? "+" : ""}${fixed(x * 100, 0)} %`;
  const sets = data.data.length > 0 ? data.data.join(" and ") : "the demo corpus";
  const lines = [
    `${sets} (${thousands(data.questions)} questions), top ${data.k}, embedder \`${data.embedder}\`; every configuration is real \`attr-rag index serve\` ` +
      `processes on one nats-server on this 2-core machine, the same chunks in total. p50 / p99 in ms and queries/s at ${clients.join(" and ")} client(s).`,
    "",
    `| configuration | ${modes.flatMap((m) => clients.map((c) => `${m} (${c})`)).join(" | ")} |`,
    `|---|${modes.flatMap(() => clients.map(() => "---")).join("|")}|`,
    ...configs.map((config) => `| ${config} | ${modes.flatMap((m) => clients.map((c) => { const l = at(config, m, c); return l ? `${fixed(l.p50_ms, 1)} / ${fixed(l.p99_ms, 1)}, ${fixed(l.queries_per_s, 0)}/s` : "–"; })).join(" | ")} |`),
    "",
    "| merge overhead at 1 client (p50 vs one store) | " + modes.join(" | ") + " |",
    `|---|${modes.map(() => "---").join("|")}|`,
    ...["1 shard × 1 replica", "2 shards"].map((c) => `| ${c} | ${modes.map((m) => pct(data.merge_overhead_p50_1_client[m][c])).join(" | ")} |`),
    "",
    `Rankings compared with one store (scores to 1e-9 position by position, the same chunks in each run of equal scores; ` +
      `in brackets, chunks one side's approximate search did not reach although their score ranks them in the top ${data.k}): ${Object.entries(data.compared)
      .map(([config, byMode]) => `${config}: ${modes.map((m) => `${m} ${byMode[m].equal}/${byMode[m].equal + byMode[m].differ}${byMode[m].unreached > 0 ? ` (${byMode[m].unreached})` : ""}`).join(", ")}`)
      .join("; ")}.`,
    "",
    `| ingest through the log, ${data.ingest.documents} documents into ${data.ingest.shards} shards | logged | applied per replica (catching up) | replicas identical |`,
    "|---|---|---|---|",
    ...[
      ["vectors in the log (embedded once, by the replica that prepares the entry)", data.ingest.vectors_in_log],
      ["no vectors (every replica embeds what it applies)", data.ingest.replicas_embed],
    ].map(([name, i]) => `| ${name} | ${fixed(i.logged_per_s, 0)} documents/s | ${fixed(i.applied_per_s_per_replica, 1)} documents/s | ${i.identical ? "yes" : "NO"} |`),
    "",
    `Applying a log with vectors is ${fixed(data.ingest.apply_speedup, 0)}× as fast per replica as embedding on every replica.`,
    "",
    provenance(results),
  ];
  return lines.join("\n");
}

function sentencesBlock(results) {
  const rows = [];
  const notes = [];
  for (const { data } of results) {
    const model = basename(data.model);
    notes.push(`\`${model}\` (${fixed(data.model_parameters / 1e6, 1)} M parameters): ${data.n_sets} sets, ${thousands(data.prompt_tokens)}-token prompt, ${data.max_tokens} new tokens.`);
    for (const [strategy, c] of Object.entries(data.sentences)) {
      rows.push(
        `| ${model} | ${strategy} | ${fixed(c.without.wall_ms / 1000, 2)} → ${fixed(c.with.wall_ms / 1000, 2)} | **${fixed(c.wall_ratio, 2)}×** | ` +
          `${thousands(c.without.tokens_evaluated)} → ${thousands(c.with.tokens_evaluated)} (${fixed(c.tokens_ratio, 2)}×) | ` +
          `${thousands(c.without.decode_steps)} → ${thousands(c.with.decode_steps)} (**${fixed(c.decode_steps_ratio, 2)}×**) | ` +
          `${thousands(c.without.decode_calls)} → ${thousands(c.with.decode_calls)} (${fixed(c.decode_calls_ratio, 2)}×) | ${c.answers_identical ? "yes" : "NO"} |`,
      );
    }
  }
  return [
    ...notes.map((n) => `- ${n}`),
    "",
    "| model | strategy | wall s, without → with | wall | rows (tokens evaluated) | decode steps | all llama_decode calls | same answers |",
    "|---|---|---|---|---|---|---|---|",
    ...rows,
    "",
    "Goal: ≤ 1.3× the occlusion stage's wall time and ≤ 1.05× its decode steps. Decode steps are the calls that extend answers; " +
      "the other calls prefill prompts or only teacher-force (after each wave of prefix-shared and naive, and the prompt without sets).",
    "",
    provenance(results),
  ].join("\n");
}

function telemetryBlock(results) {
  const lines = [];
  const unit = results.find((r) => r.data.bench === "telemetry-unit-cost")?.data;
  for (const { data } of results.filter((r) => r.data.bench === "telemetry")) {
    const runs = (mode) => data.runs.filter((r) => r.mode === mode);
    const on = runs("on");
    const pct = (x) => `${fixed(x * 100, 1)} %`;
    lines.push(
      `\`${basename(data.model)}\`: \`attr-rag bench throughput ${data.settings.throughput_args.join(" ")}\` as a child process, ${data.settings.runs} times with ` +
        `telemetry off and ${data.settings.runs} times on, alternating. On: /metrics scraped every ${thousands(data.settings.scrape_interval_ms)} ms ` +
        `(${on.map((r) => r.scrapes).join(", ")} scrapes) and every span exported over OTLP to a local sink (${on.map((r) => thousands(r.spans)).join(", ")} spans).`,
      "",
      "| telemetry | Asks/minute, each run | median | p50 latency, each run (s) |",
      "|---|---|---|---|",
      ...["off", "on"].map((mode) => `| ${mode} | ${runs(mode).map((r) => fixed(r.asks_per_minute, 2)).join(", ")} | ${fixed(data.median_asks_per_minute[mode], 2)} | ${runs(mode).map((r) => fixed(r.latency_p50_ms / 1000, 2)).join(", ")} |`),
      "",
      `Overhead (1 − median on ÷ median off): **${pct(data.overhead)}** (goal ≤ ${pct(data.goal)}); the off runs alone differ by ` +
        `${pct(Math.max(...runs("off").map((r) => r.asks_per_minute)) / Math.min(...runs("off").map((r) => r.asks_per_minute)) - 1)} from each other.`,
      "",
    );
  }
  if (unit !== undefined) {
    // What the on runs paid, per second of the first run: scrapes at their interval, and its spans over its wall time.
    const first = results.find((r) => r.data.bench === "telemetry").data;
    const on = first.runs.filter((r) => r.mode === "on");
    const spansPerS = on.reduce((n, r) => n + r.spans, 0) / (on.reduce((n, r) => n + r.wall_ms, 0) / 1000);
    const busy = unit.scrape.server_cpu_ms_per_scrape / first.settings.scrape_interval_ms + (spansPerS * unit.spans.cpu_us_per_span) / 1e6;
    lines.push(
      `What telemetry itself costs, measured where it is paid: one scrape of an embedded gateway's /metrics (${thousands(unit.scrape.bytes_per_scrape)} bytes) ` +
        `takes ${fixed(unit.scrape.server_cpu_ms_per_scrape, 1)} ms of the server's CPU; one span, exported over OTLP, ${fixed(unit.spans.cpu_us_per_span, 0)} µs ` +
        `of CPU (the sink's parsing included; ${thousands(unit.spans.spans)} spans, all received). At the first run's rate (a scrape every ` +
        `${thousands(first.settings.scrape_interval_ms)} ms, ${fixed(spansPerS, 2)} spans/s) that is **${fixed(busy * 100, 2)} % of one core**: the differences ` +
        "of the medians above are the runs' own spread, not telemetry.",
      "",
    );
  }
  lines.push(provenance(results));
  return lines.join("\n");
}

/** " on <backend> (<devices>, gpu layers N)" for a run on a GPU backend, "" on the CPU. */
function runsOn(data) {
  const backend = data.run.backend;
  return backend ? ` on ${backend.label}${backend.devices.length > 0 ? ` (${backend.devices.join(", ")}, gpu layers ${backend.gpu_layers})` : ""}` : "";
}

function throughputBlock(results) {
  const lines = [];
  for (const { data } of results) {
    const s = data.settings;
    const on = runsOn(data);
    const embedder = s.embedder && s.embedder !== "use-lite" ? `, store embedder ${basename(s.embedder.replace(/^gguf:/, ""))}` : "";
    lines.push(
      `\`${basename(data.model)}\`${on}: the same ${s.asks} Asks (demo corpus, k = ${s.k}, ${s.max_tokens} new tokens, ${s.threads} engine threads${embedder}) through one embedded ` +
        `gateway at each concurrency; ${s.sequences_per_ask} sequences of ${thousands(s.cells_per_sequence)} KV cells per Ask in flight.`,
      "",
      "| concurrency | Asks/minute | decode calls per Ask | rows per call | ms per call | µs per row | time in llama_decode | calls with several jobs | latency p50 s | p95 s | CPU s / core-s offered | answers, selections, α tables as at 1 |",
      "|---|---|---|---|---|---|---|---|---|---|---|---|",
      ...data.runs.map(
        (r) =>
          `| ${r.concurrency} | ${fixed(r.asks_per_minute, 2)} | ${fixed(r.decode_calls_per_ask, 0)} | ${fixed(r.mean_rows_per_call, 1)} | ${fixed(r.ms_per_decode_call, 1)} | ` +
          `${fixed(r.us_per_row, 0)} | ${fixed(r.decode_share * 100, 0)} % | ${thousands(r.multi_job_calls)} | ` +
          `${fixed(r.latency.p50_ms / 1000, 1)} | ${fixed(r.latency.p95_ms / 1000, 1)} | ${fixed(r.cpu_s, 0)} / ${fixed(r.cores_s, 0)} | ` +
          `${r.same_as_concurrency_1 === null ? "(the reference)" : r.same_as_concurrency_1 ? "all equal" : `differ: Asks ${r.differing_asks.join(", ")}`} |`,
      ),
      "",
    );
    const h = data.highest;
    if (h !== null) {
      lines.push(
        `Concurrency ${h.concurrency} ÷ 1: ${fixed(h.decode_calls_per_ask_ratio, 2)} of the decode calls per Ask (goal ≤ ${fixed(data.goals.decode_calls_per_ask_ratio, 1)}), ` +
          `${fixed(h.asks_per_minute_ratio, 2)}× the Asks/minute (goal ≥ ${fixed(data.goals.asks_per_minute_ratio_overhead_bound, 1)}× where overhead-bound, ≥ ${fixed(data.goals.asks_per_minute_ratio_compute_bound, 1)}× where compute-bound).`,
        "",
      );
    }
  }
  lines.push(provenance(results));
  return lines.join("\n");
}

function engineRowsBlock(results) {
  const lines = [];
  for (const { data } of results) {
    const s = data.settings;
    const on = runsOn(data);
    lines.push(
      `\`${basename(data.model)}\`${on}: ${s.asks} Asks (demo corpus, k = ${s.k}, ${s.max_tokens} new tokens, ${s.threads} engine threads, ${s.strategy}) at each concurrency, the set-ups back to back.`,
      "",
      "| output rows | KV cache | flash attention | concurrency | Asks/minute | bytes to the host per row | host µs per row | time in llama_decode | tokens/s in llama_decode | of the device ceiling | answers as the first set-up |",
      "|---|---|---|---|---|---|---|---|---|---|---|",
      ...data.runs.map(
        (r) =>
          `| ${r.sampling} | ${r.kv_cache} | ${r.flash_attention} | ${r.concurrency} | ${fixed(r.asks_per_minute, 2)} | ${thousands(Math.round(r.engine.bytes_to_host_per_row))} | ${fixed(r.engine.host_us_per_row, 1)} | ` +
          `${fixed(r.engine.decode_share * 100, 0)} % | ${fixed(r.engine.decode_tokens_per_s, 0)} | ${r.engine.ceiling_fraction === null ? "–" : `${fixed(r.engine.ceiling_fraction * 100, 0)} % of ${fixed(r.device_ceiling.tokens_per_s, 0)}`} | ` +
          `${r.same_as_first_variant === null ? "(the reference)" : r.same_as_first_variant ? "all equal" : "differ"} |`,
      ),
      "",
    );
    for (const ab of data.sampling_ab ?? []) {
      lines.push(
        `Host path ÷ device picks at concurrency ${ab.concurrency}: ${fixed(ab.host_us_per_row_ratio, 0)}× the host time per output row, ` +
          `${thousands(Math.round(ab.bytes_per_row.host))} → ${thousands(Math.round(ab.bytes_per_row.device))} bytes per row; the device path's Asks/minute ${fixed(ab.asks_per_minute_ratio, 2)}× the host path's; answers ${ab.same_answers ? "the same" : "differ"}.`,
        "",
      );
    }
  }
  lines.push(provenance(results));
  return lines.join("\n");
}

function peersBlock(results) {
  const lines = [];
  for (const { data } of results) {
    const on = runsOn(data);
    const c = data.ceiling;
    const fastest = data.fastest_exact !== null ? data.systems[data.fastest_exact] : undefined;
    lines.push(
      `\`${basename(data.model)}\`${on} (${(data.model_parameters / 1e6).toFixed(1)} M parameters): ${data.n_sets} sets, ${data.prompt_tokens}-token prompt, ${data.max_tokens} new tokens, ` +
        `${data.threads} threads, batch ${data.batch_size}, ${thousands(data.sequence_cells)} KV cells per sequence, ${(data.runs ?? 1) > 1 ? `wall the median of ${data.runs} rounds (every system once per round)` : "one round"}; ceiling ${c ? `${thousands(c.tokens_per_s)} tokens/s (one batch of ${c.batch_tokens} tokens)` : "not measured"}.`,
      "",
      "| system | wall s | rounds s | wall ÷ fastest exact | tokens evaluated | llama_decode calls | tokens/s (of the ceiling) | multiply-adds (G) | peak RSS MiB | identical to naive |",
      "|---|---|---|---|---|---|---|---|---|---|",
      ...Object.entries(data.systems).map(
        ([name, s]) =>
          `| ${s.approximate ? `${name} (APPROXIMATE)` : name} | ${fixed(s.wall_ms / 1000, 1)} | ${(s.wall_runs_ms ?? [s.wall_ms]).map((w) => fixed(w / 1000, 1)).join(", ")} | ${fastest ? `${fixed(s.wall_ms / fastest.wall_ms, 2)}×` : "–"} | ${thousands(s.tokens_evaluated)} | ` +
          `${s.decode_calls === null ? "–" : thousands(s.decode_calls)} | ${thousands(s.tokens_per_s)} (${s.ceiling_fraction === null ? "–" : `${fixed(s.ceiling_fraction * 100, 0)} %`}) | ${s.macs < 1e10 ? fixed(s.macs / 1e9, 1) : thousands(s.macs / 1e9)} | ` +
          `${fixed(s.peak_rss_mib, 0)} | ${s.identical_to_naive === null ? "reference" : `${s.identical_to_naive}/${s.answers}`}${s.fidelity ? ` (occluded: ${fixed(s.fidelity.occluded_identical * 100, 0)} %)` : ""}` +
          `${s.answers_same_every_run === false ? ", not the same every round" : ""} |`,
      ),
      "",
    );
    if (data.speedup !== null) {
      lines.push(
        `Fastest exact strategy (${data.fastest_exact}) against the faster peer (${data.faster_peer}): ${fixed(data.speedup, 2)}× faster in wall time, ` +
          `while the peer does ${fixed(data.macs_ratio, 2)}× its multiply-adds; ${data.max_divergence_margin === null ? "answers not compared" : data.max_divergence_margin === 0 ? "every exact system's answers token-identical to naive's" : `largest naive margin where an exact system's answer first differs from naive's: ${data.max_divergence_margin < 1e-3 ? data.max_divergence_margin.toExponential(1) : fixed(data.max_divergence_margin, 3)} (a near-tie when ≤ 0.1)`}.`,
        "",
      );
    }
    for (const [name, why] of Object.entries(data.skipped)) lines.push(`${name} not run: ${why.split("\n")[0]}`, "");
  }
  lines.push(provenance(results));
  return lines.join("\n");
}

function batchBlock(results) {
  const [{ data }] = results;
  const s = data.settings;
  const e = data.embedded_one_by_one;
  const two = data.speedup["2"];
  const i = data.interactive;
  const l = data.large;
  const lines = [
    `\`${basename(data.model)}\`, k = ${s.k}, ${s.max_tokens} new tokens, ${s.threads_per_worker} engine thread per worker (and in the embedded gateway), ` +
      `${thousands(s.context_size)} KV cells per worker; the same ${s.items} Asks each way.`,
    "",
    "| how | workers | items | wall s | items/minute | vs 1 worker | jobs per worker |",
    "|---|---|---|---|---|---|---|",
    `| embedded gateway, one Ask at a time | – | ${e.items} | ${fixed(e.wall_ms / 1000, 1)} | ${fixed(e.items_per_minute, 1)} | – | – |`,
    ...data.batches.map(
      (b) =>
        `| one batch through the cluster | ${b.workers} | ${b.items} | ${fixed(b.wall_ms / 1000, 1)} | ${fixed(b.items_per_minute, 1)} | ${data.speedup[String(b.workers)] !== undefined ? `${fixed(data.speedup[String(b.workers)], 2)}×` : "–"} | ${b.jobs_per_worker.join(", ")} |`,
    ),
    "",
    (two !== undefined ? `Two single-thread workers on two cores: ${fixed(two, 2)}× one (goal ≥ ${fixed(data.goals.speedup_2_workers, 1)}×). ` : "") +
      (data.cluster_vs_embedded !== null
        ? `A batch through a 1-worker cluster: ${fixed(data.cluster_vs_embedded, 2)}× the items/minute of the same Asks one by one through an embedded gateway (goal ≥ ${fixed(data.goals.cluster_vs_embedded, 2)}×).`
        : ""),
  ];
  const widest = data.batches.at(-1);
  if (widest?.cpu_s !== undefined && Object.keys(widest.cpu_s).length > 0) {
    const used = Object.entries(widest.cpu_s).sort((a, b) => b[1] - a[1]);
    const total = used.reduce((sum, [, s]) => sum + s, 0);
    lines.push(
      "",
      `CPU during the ${widest.workers}-worker batch: ${used.map(([name, s]) => `${name} ${fixed(s, 0)} s`).join(", ")}; ` +
        `${fixed(total, 0)} of the ${fixed(widest.cores_s, 0)} core-seconds the machine offered (${fixed((total / widest.cores_s) * 100, 0)} %).`,
    );
    // The same jobs' worker CPU on one worker and on several at once: what the cores give when all are busy.
    const workerCpu = (b) => Object.entries(b.cpu_s ?? {}).filter(([name]) => name.startsWith("worker")).reduce((sum, [, s]) => sum + s, 0);
    const one = data.batches.find((b) => b.workers === 1);
    if (one !== undefined && one !== widest && workerCpu(one) > 0) {
      const alone = workerCpu(one);
      const together = workerCpu(widest);
      lines.push(
        "",
        `The same jobs took ${fixed(alone, 0)} worker CPU-seconds on one worker and ${fixed(together, 0)} on ${widest.workers} at once (${fixed((together / alone - 1) * 100, 0)} % more: ` +
          `busy cores each get less done per second on this machine), so ${widest.workers} workers could reach at most ${fixed((widest.workers * alone) / together, 2)}× one even if never idle.`,
      );
    }
  }
  if (i !== null) {
    lines.push(
      "",
      `Interactive Ask on the ${i.workers}-worker cluster (median of ${i.idle.runs_ms.length}): ${thousands(i.idle.median_ms)} ms idle, ${thousands(i.during_batch.median_ms)} ms while a ` +
        `${i.batch_items}-item batch runs = ${fixed(i.ratio, 2)}× (goal ≤ ${fixed(data.goals.interactive_ratio, 0)}×).`,
    );
  }
  if (l !== null) {
    lines.push(
      "",
      `Large batch on the ${l.workers}-worker cluster: ${thousands(l.items)} items (${fixed(l.request_bytes / 1048576, 1)} MB) accepted by one CreateBatch in ${fixed(l.submit_ms / 1000, 2)} s; ` +
        `while it ran, GetBatch took ${fixed(l.status.median_ms, 1)} ms median, ${fixed(l.status.p95_ms, 1)} ms p95 (${l.status.reads} reads), and ListBatchResults read its ` +
        `${thousands(l.results_read.results)} results in ${thousands(l.results_read.ms)} ms; after CancelBatch every item had its result in ${fixed(l.cancel_to_end_ms / 1000, 1)} s.`,
    );
  }
  lines.push("", provenance(results));
  return lines.join("\n");
}

function attributionEvalBlock(results) {
  const ks = Object.keys(results[0].data.methods.shapley.precision_at);
  // Cells that hold by construction, not by measurement, are marked: RQ1 is measured against exact Shapley,
  // and RQ2's top-1 reference (the set whose removal drops v the most) is leave-one-out's own top-1.
  const mark = (text, byConstruction) => (byConstruction ? `${text}†` : text);
  const rows = results.flatMap(({ data }) =>
    Object.entries(data.methods).map(
      ([m, r]) =>
        `| ${basename(data.model)} | ${m} | ${mark(fixed(r.spearman, 2), m === "shapley")} | ${mark(fixed(r.kendall, 2), m === "shapley")} | ` +
        `${ks.map((k) => mark(fixed(r.precision_at[k], 2), m === "leave-one-out" && k === "1")).join(" | ")} | ${fixed(r.utility_calls, 1)} | ${fixed(r.positives_top2 * 100, 0)} % |`,
    ),
  );
  const d = results[0].data;
  return [
    `Tiny-model results (the models are not instruction-tuned; they show the methods' agreement, not answer quality): ${d.examples} ${d.kind} examples of ` +
      `${d.sets_per_example} passages (2 positives, ${d.sets_per_example - 2} negatives), sampling methods at ${d.samples} samples, seed ${d.seed}.`,
    "",
    `| model | method | RQ1 Spearman | RQ1 Kendall | ${ks.map((k) => `RQ2 P@${k}`).join(" | ")} | utility calls | both positives top-2 |`,
    `|---|---|---|---|${ks.map(() => "---|").join("")}---|---|`,
    ...rows,
    "",
    "† true by construction, not a finding: RQ1 compares every method with exact Shapley, so Shapley's own row is 1; RQ2's top-1 reference is the set whose removal drops v the most, which is leave-one-out's top-1.",
    "",
    provenance(results),
  ].join("\n");
}

function attributionBenchBlock(results) {
  const [{ data }] = results;
  const b = data.batched;
  const o = data.one_by_one;
  return [
    `\`${basename(data.model)}\`: ${data.n_sets} sets, ${thousands(data.prompt_tokens)}-token prompt, A_full of ${data.answer_tokens} tokens; ` +
      `Kernel SHAP with ${data.samples} samples asked for ${data.coalitions} distinct coalitions.`,
    "",
    "| | wall s | tokens evaluated | vocabulary rows |",
    "|---|---|---|---|",
    `| one coalition at a time | ${fixed(o.wall_ms / 1000, 1)} | ${thousands(o.tokens_evaluated)} | ${thousands(o.output_rows)} |`,
    `| batched, trie-shared | ${fixed(b.wall_ms / 1000, 1)} | ${thousands(b.tokens_evaluated)} (${thousands(b.tokens_reused)} reused) | ${thousands(b.output_rows)} |`,
    "",
    `Speed-up **${fixed(data.speedup, 2)}×**; multiply-add bound of this layout **${fixed(data.multiply_add_bound, 2)}×**; largest |Δv| between the two: ${Number(data.max_abs_diff).toExponential(1)} nats.`,
    "",
    provenance(results),
  ].join("\n");
}

function soakBlock(results) {
  const [{ data, prefix }] = results;
  const s = data.soak;
  const sum = data.summary;
  const kinds = { kill: "SIGKILL, restarted at once", pause: "SIGSTOP, then SIGCONT", "late-restart": "SIGKILL, restarted late", "nats-restart": "nats-server killed, restarted on its store" };
  const ops = Object.entries(data.operations).sort((a, b) => a[0].localeCompare(b[0]));
  const total = ops.reduce((n, [, codes]) => n + Object.values(codes).reduce((a, b) => a + b, 0), 0);
  const outcomes = (codes) => Object.entries(codes).filter(([code]) => code !== "OK").sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code} ${thousands(n)}`).join(", ") || "–";
  const rss = Object.entries(sum.rss_mib).map(([name, r]) => `${name} ${r.first_quarter_mib}→${r.last_quarter_mib}`);
  return [
    `${fixed(s.minutes, 0)} minutes of load at ${fixed(s.faults_per_minute, 0)} faults a minute (seed ${s.seed}), then up to ${fixed(s.recovery_ms / 1000, 0)} s of recovery: ` +
      `**${data.faults.applied} faults applied** (of ${data.faults.scheduled} scheduled), **${thousands(total)} operations**, **${data.violations.length} violations**.`,
    "",
    "| fault | what | count |",
    "|---|---|---|",
    ...Object.entries(data.faults.by_kind).map(([kind, n]) => `| ${kind} | ${kinds[kind] ?? kind} | ${n} |`),
    "",
    "| operation | OK | other outcomes |",
    "|---|---|---|",
    ...ops.map(([kind, codes]) => `| ${kind} | ${thousands(codes.OK ?? 0)} | ${outcomes(codes)} |`),
    "",
    `Batches at the end: ${Object.entries(sum.batches).sort().map(([state, n]) => `${thousands(n)} ${state === "missing" ? "never created (every create of theirs failed)" : state}`).join(", ")}. ` +
      `Webhook attempts: ${thousands(sum.webhooks.attempts)}, ${thousands(sum.webhooks.accepted)} accepted; the receiver refused or stalled the others on purpose.`,
    "",
    `Resident memory in MiB (median of the first → the last quarter of each role's samples): ${rss.join(", ")}.`,
    ...(data.faults.started_again?.length > 0 ? ["", `Restarted processes that exited while starting and were started again, as the deployments' supervisors would: ${data.faults.started_again.join("; ")}.`] : []),
    ...(data.faults.errors.length > 0 ? ["", `Faults not applied or not undone as scheduled: ${data.faults.errors.join("; ")}.`] : []),
    ...(data.violations.length > 0 ? ["", "Violations:", "", ...data.violations.map((v) => `- ${v.rule}: ${v.message}`)] : []),
    "",
    `The whole history (every operation, fault, webhook attempt and RSS sample): [${sum.history}](${prefix}bench/results/${sum.history}).`,
    "",
    provenance(results),
  ].join("\n");
}

/**
 * Every document (README.md, docs/*.md) with its text and its text re-rendered; throws unless each block is
 * in exactly one document.
 */
export function renderDocs(load = loadResult) {
  const docs = docFiles().map((file) => {
    const text = readFileSync(join(REPO_ROOT, file), "utf8");
    return { file, text, rendered: renderReadme(text, load, { prefix: file.startsWith("docs/") ? "../" : "", every: false }) };
  });
  for (const name of Object.keys(BLOCKS)) {
    const holders = docs.filter((d) => d.text.includes(`<!-- generated:${name} -->`)).map((d) => d.file);
    if (holders.length !== 1) throw new Error(`block ${name} must be in exactly one document, found in ${holders.length ? holders.join(", ") : "none"}`);
  }
  return docs;
}

// ---------------------------------------------------------------------------------------------- command

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const stale = renderDocs().filter((d) => d.rendered !== d.text);
  if (process.argv.includes("--check")) {
    if (stale.length > 0) {
      console.error(`generated tables differ from bench/results/ in ${stale.map((d) => d.file).join(", ")}; run node packages/bench/render/readme-tables.mjs`);
      process.exit(1);
    }
    console.log("every generated table matches bench/results/");
  } else {
    for (const d of stale) writeFileSync(join(REPO_ROOT, d.file), d.rendered);
    console.log(stale.length === 0 ? "every document already up to date" : `generated tables rewritten from bench/results/ in ${stale.map((d) => d.file).join(", ")}`);
  }
}
