import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { dedupeRanking, InputError, ndcgAtK, recallAtK, reciprocalRank } from "@attr-rag/core";
import {
  ChunkStore,
  DEFAULT_FUSION,
  describeFusion,
  hybridCandidates,
  MAX_K,
  type FusionSettings,
  type SearchHit,
} from "@attr-rag/index";
import { CliError } from "../cliError.js";
import { parseQuantization } from "../parseArgs.js";
import { formatTune, fusionGrid, TUNE_RECALL_K, tuneFusion, tuneJson, type TuneResult } from "../eval/tuneFusion.js";
import { registerEvalAttributionCommand } from "./evalAttribution.js";
import { ingestCorpus, loadQuestions, scanCorpus, type EvalQuestion } from "../eval/evalInputs.js";
import { registerEvalAnswersCommand } from "./evalAnswers.js";
import { registerEvalOcclusionCommand } from "./evalOcclusion.js";
import { startEmbedder, storeErrorToCli } from "../storeCli.js";
import { describeRun } from "@attr-rag/bench";

export const EVAL_MODES = ["dense", "bm25", "hybrid"] as const;
export type EvalMode = (typeof EVAL_MODES)[number];

/** nDCG is reported at this cut-off whatever --k says. */
export const NDCG_K = 10;
/** Chunks fetched per question = this × the deepest doc-level cut-off (several chunks often share a document). */
export const CHUNK_FETCH_FACTOR = 3;

export type { EvalQuestion } from "../eval/evalInputs.js";

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
  if (parts.length === 0 || parts.some((p) => p === "")) throw new CliError(`--k must be a comma-separated list of positive integers, got "${value}"`);
  const ks = parts.map((p) => {
    const n = Number(p);
    if (!/^\d+$/.test(p) || !Number.isSafeInteger(n) || n < 1) throw new CliError(`--k: "${p}" is not a positive integer (in "${value}")`);
    if (n > MAX_K) throw new CliError(`--k: ${n} is more than the limit of ${MAX_K}`);
    return n;
  });
  return [...new Set(ks)].sort((a, b) => a - b);
}

export function parseModes(value: string): EvalMode[] {
  if (value === "all") return [...EVAL_MODES];
  if ((EVAL_MODES as readonly string[]).includes(value)) return [value as EvalMode];
  throw new CliError(`--mode must be one of ${EVAL_MODES.join(", ")}, all; got "${value}"`);
}

interface EvalOptions {
  corpus: string;
  questions: string;
  store?: string;
  k: string;
  mode: string;
  embedder: string;
  quantization?: string;
  json?: boolean;
  tune?: boolean;
}

function runMode(store: ChunkStore, mode: EvalMode, q: EvalQuestion, vector: Float32Array | undefined, fetch: number): SearchHit[] {
  try {
    if (mode === "bm25") return store.searchBm25(q.question, { k: fetch });
    if (mode === "dense") return store.searchDense(vector!, { k: fetch });
    return store.searchHybrid(q.question, vector!, { k: fetch });
  } catch (err) {
    const cli = storeErrorToCli(err);
    if (cli instanceof InputError) throw new CliError(`question "${q.id}" (line ${q.line}), ${mode}: ${cli.message}`, cli.exitCode, { cause: err });
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

export function registerEvalCommand(program: Command): void {
  const evalCmd = program.command("eval").summary("evaluate the pipeline on a benchmark (see: eval retrieval, eval attribution)");
  registerEvalAttributionCommand(evalCmd);
  registerEvalAnswersCommand(evalCmd);
  registerEvalOcclusionCommand(evalCmd);
  evalCmd
    .command("retrieval")
    .summary("doc-level Recall@k, MRR and nDCG@10 of dense, BM25 and hybrid search on a benchmark")
    .description(
      [
        "Ingests --corpus (SPEC section 5 corpus.jsonl) into --store (created when",
        "missing; unchanged documents are not re-embedded) or, without --store, into",
        "a temporary store that is removed afterwards. Then runs every question of",
        `--questions through each mode, fetching ${CHUNK_FETCH_FACTOR} × max(max k, ${NDCG_K}) chunks, maps the`,
        "chunk hits to their documents (a document counts once, at its first rank)",
        "and scores them against gold_doc_ids (binary relevance). Averages are over",
        "the questions with gold documents; the others (negative questions) are",
        "counted as skipped_no_gold. Timings go to stderr. With --json, one line:",
        "  {corpus (documents), questions, evaluated, skipped_no_gold,",
        '   modes: {<mode>: {recall: {"<k>": x}, mrr, "ndcg@10"}}}',
        "When hybrid runs, `fusion` says which fusion it used: {method, rrfK?,",
        'bm25Weight, from: "store" | "default"}.',
        "",
        "--tune (needs --store) first fits hybrid's fusion on these questions: for",
        "each question it fetches the BM25 and dense candidates once, then scores",
        "weighted RRF (BM25 weight 1..32 × k 10, 30, 60) and convex score fusion",
        "(λ 0, 0.05, ..., 1) offline, keeps the best mean nDCG@10 (ties: higher",
        `R@${TUNE_RECALL_K}, then the simpler fusion) and records it in the store, where ask,`,
        "search and serve use it by default from then on. It prints the best few",
        "with nDCG@10 before and after (in JSON: `tune`, with the whole grid). The",
        "scores that follow are on the questions it was fitted on, so optimistic:",
        "judge a tuned fusion on other questions.",
        "",
        "Bad input (a missing file, a bad JSON line, a question without",
        '"question", --tune without --store) exits 2.',
      ].join("\n"),
    )
    .requiredOption("--corpus <file>", "corpus.jsonl: {id, title, text, source, license} per line")
    .requiredOption("--questions <file>", "questions.jsonl: {id, question, gold_doc_ids, ...} per line")
    .option("--store <dir>", "store to (re)use for this corpus; default: a temporary one")
    .option("--k <list>", "doc-level cut-offs for Recall@k", "1,5,10,30")
    .option("--mode <mode>", `${EVAL_MODES.join(" | ")} | all`, "all")
    .option("--embedder <spec>", "use-lite | gguf:/path/to/model.gguf (must match --store's)", "use-lite")
    .option("--quantization <type>", "vector element type of a store this creates: f16 | f32 (default f16)")
    .option("--json", "print the report as one JSON line")
    .option("--tune", "fit hybrid's fusion on these questions and record it in --store for ask/search/serve")
    .action(async (o: EvalOptions) => {
      const run = describeRun(); // the commit and tree state of the code that was loaded, read before the work
      const ks = parseKList(o.k);
      const quantization = parseQuantization(o.quantization);
      const modes = parseModes(o.mode);
      if (o.tune && o.store === undefined) {
        throw new CliError("--tune records the fitted fusion in the store it evaluates, so it needs --store DIR (a temporary store would be thrown away)");
      }
      const depth = Math.max(ks[ks.length - 1]!, NDCG_K);
      const fetch = Math.min(MAX_K, CHUNK_FETCH_FACTOR * depth);
      const questions = await loadQuestions(o.questions);
      const corpus = await scanCorpus(o.corpus);
      const evaluated = questions.filter((q) => q.gold.length > 0);
      if (evaluated.length === 0) throw new CliError(`--questions ${o.questions}: no question has gold_doc_ids; nothing to score`);
      const unknownGold = new Set(evaluated.flatMap((q) => q.gold.filter((g) => !corpus.ids.has(g))));
      if (unknownGold.size > 0) {
        const some = [...unknownGold].slice(0, 5).join(", ");
        process.stderr.write(`eval: warning: ${unknownGold.size} gold document id(s) are not in the corpus (${some}${unknownGold.size > 5 ? ", ..." : ""}); they can never be retrieved\n`);
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
            ...(quantization ? { quantization } : {}),
          }).catch((err: unknown) => {
            throw storeErrorToCli(err);
          });
          try {
            const t0 = performance.now();
            const ingested = await ingestCorpus(store, embedder, o.corpus);
            const stats = store.stats();
            if (stats.documents > corpus.ids.size) {
              throw new CliError(
                `store ${store.path} holds ${stats.documents - corpus.ids.size} document(s) that are not in ${o.corpus}; ` +
                  "they would distort the scores — use a store made for this corpus only (or leave out --store)",
              );
            }
            if (store.stats().missingVectors > 0) await store.rebuildVectors((texts) => embedder.embed(texts));
            process.stderr.write(
              `eval: store ${store.path}: ${stats.documents} documents, ${stats.chunks} chunks ` +
                `(${ingested.written} embedded, ${ingested.unchanged} unchanged) in ${((performance.now() - t0) / 1000).toFixed(1)} s\n`,
            );

            let vectors: Float32Array[] = [];
            if (o.tune || modes.some((m) => m !== "bm25")) {
              const t = performance.now();
              vectors = await embedder.embed(evaluated.map((q) => q.question));
              process.stderr.write(`eval: embedded ${evaluated.length} questions in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
            }
            let tune: TuneResult | undefined;
            if (o.tune) {
              tune = tuneStoreFusion(store, evaluated, vectors, depth);
              process.stderr.write(`eval: tune: ${tune.ranked.length} fusions on ${evaluated.length} questions\n`);
              if (!o.json) process.stdout.write(formatTune(tune, evaluated.length, store.path));
            }
            const scores: Partial<Record<EvalMode, ModeScores>> = {};
            for (const mode of modes) {
              const t = performance.now();
              const items = evaluated.map((q, i) => {
                const hits = runMode(store, mode, q, vectors[i], fetch);
                return { ranked: dedupeRanking(hits.map((h) => h.docId)).slice(0, depth), gold: q.gold };
              });
              scores[mode] = scoreRankings(items, ks);
              const ms = performance.now() - t;
              process.stderr.write(`eval: ${mode}: ${evaluated.length} questions in ${(ms / 1000).toFixed(2)} s (${(ms / evaluated.length).toFixed(1)} ms/question)\n`);
            }
            const report: RetrievalReport = {
              corpus: corpus.documents,
              questions: questions.length,
              evaluated: evaluated.length,
              skipped_no_gold: questions.length - evaluated.length,
              modes: scores,
              ...(modes.includes("hybrid") ? { fusion: { ...store.fusion, from: store.hasRecordedFusion ? "store" : "default" } } : {}),
            };
            const tuned = tune ? { tune: tuneJson(tune, evaluated.length) } : {};
            process.stdout.write(o.json ? `${JSON.stringify({ ...report, ...tuned, chunks: store.stats().chunks, run })}\n` : formatReport(report, ks));
          } finally {
            await store.close();
          }
        } finally {
          await embedder.dispose();
        }
      } finally {
        if (tempDir) rmSync(tempDir, { recursive: true, force: true });
      }
    });
}
