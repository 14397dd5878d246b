// `attr-rag eval retrieval`: doc-level Recall@k, MRR and nDCG@10 of dense, BM25 and hybrid search on a
// benchmark, and --tune's fit of hybrid's fusion (docs/evaluation.md).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dedupeRanking, InputError, ndcgAtK, recallAtK, reciprocalRank } from "@attr-rag/core";
import {
  ChunkStore,
  DEFAULT_FUSION,
  describeFusion,
  hybridCandidates,
  MAX_K,
  startEmbedder,
  storeErrorAsInput,
  type FusionSettings,
  type SearchHit,
} from "@attr-rag/index";
import { fusionGrid, TUNE_RECALL_K, tuneFusion, tuneJson, type TuneResult } from "../tuneFusion.js";
import { ingestCorpus, loadQuestions, scanCorpus, type EvalQuestion } from "../evalInputs.js";

export const EVAL_MODES = ["dense", "bm25", "hybrid"] as const;
export type EvalMode = (typeof EVAL_MODES)[number];

/** nDCG is reported at this cut-off whatever --k says. */
export const NDCG_K = 10;
/** Chunks fetched per question = this × the deepest doc-level cut-off (several chunks often share a document). */
export const CHUNK_FETCH_FACTOR = 3;

/** Averages over the questions that have gold documents. */
export interface ModeScores {
  readonly recall: Record<string, number>;
  readonly mrr: number;
  readonly "ndcg@10": number;
}

export interface RetrievalReport {
  /** Documents in the corpus file. */
  readonly corpus: number;
  /** Questions in the questions file. */
  readonly questions: number;
  /** Questions with at least one gold document (the averages are over these). */
  readonly evaluated: number;
  /** Questions without gold documents (e.g. kind "negative"), left out of the averages. */
  readonly skipped_no_gold: number;
  readonly modes: Partial<Record<EvalMode, ModeScores>>;
  /** The fusion hybrid used (present when hybrid was evaluated): the store's recorded one, or the library default. */
  readonly fusion?: FusionSettings & { readonly from: "store" | "default" };
}

/**
 * Doc-level scores for one mode: `rankings[i]` is the ranked document ids retrieved for `questions[i]`
 * (chunk hits mapped to their documents; duplicates count once, at their first rank). Binary relevance
 * from the gold ids. Questions without gold ids are skipped; there must be at least one with gold ids.
 */
export function scoreRankings(
  items: readonly { readonly ranked: readonly string[]; readonly gold: readonly string[] }[],
  ks: readonly number[],
): ModeScores {
  const scored = items.filter((it) => it.gold.length > 0);
  if (scored.length === 0) throw new RangeError("scoreRankings: no question has gold document ids");
  const recall: Record<string, number> = {};
  for (const k of ks) recall[String(k)] = 0;
  let mrr = 0;
  let ndcg = 0;
  for (const it of scored) {
    const ranked = dedupeRanking(it.ranked);
    const relevant = new Set(it.gold);
    for (const k of ks) recall[String(k)]! += recallAtK(ranked, relevant, k);
    mrr += reciprocalRank(ranked, relevant);
    ndcg += ndcgAtK(ranked, relevant, NDCG_K);
  }
  for (const k of ks) recall[String(k)]! /= scored.length;
  return { recall, mrr: mrr / scored.length, "ndcg@10": ndcg / scored.length };
}

/** `--k 1,5,10,30` → [1, 5, 10, 30] (sorted, duplicates dropped); each an integer in 1..MAX_K. */
export function parseKList(value: string): number[] {
  const parts = value.split(",").map((s) => s.trim());
  if (parts.length === 0 || parts.some((p) => p === "")) throw new InputError(`--k must be a comma-separated list of positive integers, got "${value}"`);
  const ks = parts.map((p) => {
    const n = Number(p);
    if (!/^\d+$/.test(p) || !Number.isSafeInteger(n) || n < 1) throw new InputError(`--k: "${p}" is not a positive integer (in "${value}")`);
    if (n > MAX_K) throw new InputError(`--k: ${n} is more than the limit of ${MAX_K}`);
    return n;
  });
  return [...new Set(ks)].sort((a, b) => a - b);
}

export function parseModes(value: string): EvalMode[] {
  if (value === "all") return [...EVAL_MODES];
  if ((EVAL_MODES as readonly string[]).includes(value)) return [value as EvalMode];
  throw new InputError(`--mode must be one of ${EVAL_MODES.join(", ")}, all; got "${value}"`);
}

function runMode(store: ChunkStore, mode: EvalMode, q: EvalQuestion, vector: Float32Array | undefined, fetch: number): SearchHit[] {
  try {
    if (mode === "bm25") return store.searchBm25(q.question, { k: fetch });
    if (mode === "dense") return store.searchDense(vector!, { k: fetch });
    return store.searchHybrid(q.question, vector!, { k: fetch });
  } catch (err) {
    const cli = storeErrorAsInput(err);
    if (cli instanceof InputError) throw new InputError(`question "${q.id}" (line ${q.line}), ${mode}: ${cli.message}`, cli.exitCode, { cause: err });
    throw err;
  }
}

/**
 * Fits the store's hybrid fusion on the questions (tuneFusion) and records it. The candidate lists are
 * fetched as deep as the eval's hybrid fetches them for `evalDepth` documents (at least R@30's), so with
 * --k reaching 30 the fitted scores are the ones the report then shows.
 */
function tuneStoreFusion(store: ChunkStore, questions: readonly EvalQuestion[], vectors: readonly Float32Array[], evalDepth: number): TuneResult {
  const depth = Math.max(evalDepth, TUNE_RECALL_K);
  const fetch = Math.min(MAX_K, CHUNK_FETCH_FACTOR * depth);
  const candidates = Math.min(MAX_K, hybridCandidates(fetch));
  const items = questions.map((q, i) => ({
    bm25: runMode(store, "bm25", q, vectors[i], candidates),
    dense: runMode(store, "dense", q, vectors[i], candidates),
    gold: q.gold,
  }));
  // An unreadable recorded fusion is what --tune replaces; score "before" as the default it falls back to.
  let before: FusionSettings;
  try {
    before = store.fusion;
  } catch {
    before = DEFAULT_FUSION;
  }
  const result = tuneFusion(items, fusionGrid(), before, { fetch, depth });
  store.setFusion(result.chosen.fusion);
  return result;
}

export function formatReport(report: RetrievalReport, ks: readonly number[]): string {
  const head = ["mode", ...ks.map((k) => `R@${k}`), "MRR", "nDCG@10"];
  const rows = Object.entries(report.modes).map(([mode, s]) => [
    mode,
    ...ks.map((k) => s.recall[String(k)]!.toFixed(4)),
    s.mrr.toFixed(4),
    s["ndcg@10"].toFixed(4),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const fmt = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [
    `corpus: ${report.corpus} documents; questions: ${report.questions} (${report.evaluated} evaluated, ${report.skipped_no_gold} without gold documents skipped)`,
    fmt(head),
    ...rows.map(fmt),
    ...(report.fusion ? [`hybrid fusion: ${describeFusion(report.fusion)} (${report.fusion.from === "store" ? "recorded in the store" : "library default"})`] : []),
    "",
  ].join("\n");
}


export interface RetrievalEvalOptions {
  /** corpus.jsonl and questions.jsonl paths (SPEC section 5), as the user named them. */
  readonly corpus: string;
  readonly questions: string;
  /** A store to (re)use for this corpus; without one, a temporary store is made and removed. */
  readonly store?: string | undefined;
  readonly ks: readonly number[];
  readonly modes: readonly EvalMode[];
  /** Embedder spec (use-lite | gguf:PATH). */
  readonly embedder: string;
  readonly quantization?: "f32" | "f16" | undefined;
  /** Fit hybrid's fusion on these questions first and record it in the store. */
  readonly tune: boolean;
  /** Progress and timings, a line at a time (stderr on the command line). */
  readonly log: (line: string) => void;
  /** The tune's result, when there is one, as soon as it is known (before the scores). */
  readonly onTune?: (tune: TuneResult, questions: number, storePath: string) => void;
}

/** Ingests the corpus into the store, runs every question through each mode and scores the rankings. */
export async function evaluateRetrieval(o: RetrievalEvalOptions): Promise<{ report: RetrievalReport; tune?: ReturnType<typeof tuneJson>; chunks: number }> {
  if (o.tune && o.store === undefined) {
    throw new InputError("--tune records the fitted fusion in the store it evaluates, so it needs --store DIR (a temporary store would be thrown away)");
  }
  const ks = o.ks;
  const depth = Math.max(ks[ks.length - 1]!, NDCG_K);
  const fetch = Math.min(MAX_K, CHUNK_FETCH_FACTOR * depth);
  const questions = await loadQuestions(o.questions);
  const corpus = await scanCorpus(o.corpus);
  const evaluated = questions.filter((q) => q.gold.length > 0);
  if (evaluated.length === 0) throw new InputError(`--questions ${o.questions}: no question has gold_doc_ids; nothing to score`);
  const unknownGold = new Set(evaluated.flatMap((q) => q.gold.filter((g) => !corpus.ids.has(g))));
  if (unknownGold.size > 0) {
    const some = [...unknownGold].slice(0, 5).join(", ");
    o.log(`eval: warning: ${unknownGold.size} gold document id(s) are not in the corpus (${some}${unknownGold.size > 5 ? ", ..." : ""}); they can never be retrieved`);
  }

  const tempDir = o.store === undefined ? mkdtempSync(join(tmpdir(), "attr-rag-eval-")) : undefined;
  const storeDir = o.store ?? join(tempDir!, "store");
  try {
    const embedder = await startEmbedder(o.embedder);
    try {
      const store = await ChunkStore.open(storeDir, {
        create: true,
        embedder: { id: embedder.id, dimensions: embedder.dimensions },
        embed: (texts) => embedder.embed(texts),
        ...(o.quantization ? { quantization: o.quantization } : {}),
      }).catch((err: unknown) => {
        throw storeErrorAsInput(err);
      });
      try {
        const t0 = performance.now();
        const ingested = await ingestCorpus(store, embedder, o.corpus);
        const stats = store.stats();
        if (stats.documents > corpus.ids.size) {
          throw new InputError(
            `store ${store.path} holds ${stats.documents - corpus.ids.size} document(s) that are not in ${o.corpus}; ` +
              "they would distort the scores — use a store made for this corpus only (or leave out --store)",
          );
        }
        if (store.stats().missingVectors > 0) await store.rebuildVectors((texts) => embedder.embed(texts));
        o.log(
          `eval: store ${store.path}: ${stats.documents} documents, ${stats.chunks} chunks ` +
            `(${ingested.written} embedded, ${ingested.unchanged} unchanged) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
        );

        let vectors: Float32Array[] = [];
        if (o.tune || o.modes.some((m) => m !== "bm25")) {
          const t = performance.now();
          vectors = await embedder.embed(evaluated.map((q) => q.question));
          o.log(`eval: embedded ${evaluated.length} questions in ${((performance.now() - t) / 1000).toFixed(1)} s`);
        }
        let tune: TuneResult | undefined;
        if (o.tune) {
          tune = tuneStoreFusion(store, evaluated, vectors, depth);
          o.log(`eval: tune: ${tune.ranked.length} fusions on ${evaluated.length} questions`);
          o.onTune?.(tune, evaluated.length, store.path);
        }
        const scores: Partial<Record<EvalMode, ModeScores>> = {};
        for (const mode of o.modes) {
          const t = performance.now();
          const items = evaluated.map((q, i) => {
            const hits = runMode(store, mode, q, vectors[i], fetch);
            return { ranked: dedupeRanking(hits.map((h) => h.docId)).slice(0, depth), gold: q.gold };
          });
          scores[mode] = scoreRankings(items, ks);
          const ms = performance.now() - t;
          o.log(`eval: ${mode}: ${evaluated.length} questions in ${(ms / 1000).toFixed(2)} s (${(ms / evaluated.length).toFixed(1)} ms/question)`);
        }
        const report: RetrievalReport = {
          corpus: corpus.documents,
          questions: questions.length,
          evaluated: evaluated.length,
          skipped_no_gold: questions.length - evaluated.length,
          modes: scores,
          ...(o.modes.includes("hybrid") ? { fusion: { ...store.fusion, from: store.hasRecordedFusion ? "store" : "default" } } : {}),
        };
        return { report, ...(tune ? { tune: tuneJson(tune, evaluated.length) } : {}), chunks: store.stats().chunks };
      } finally {
        await store.close();
      }
    } finally {
      await embedder.dispose();
    }
  } finally {
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  }
}
