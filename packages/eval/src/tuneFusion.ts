import { dedupeRanking, ndcgAtK, recallAtK } from "@attr-rag/core";
import { describeFusion, fuseHits, type FusionSettings, type SearchHit } from "@attr-rag/index";

/** The tuner maximises doc-level nDCG at this cut-off (what eval retrieval reports)... */
export const TUNE_NDCG_K = 10;
/** ...and breaks ties by Recall at this one: Attr-RAG retrieves 30 chunks, so what is found by 30 is what it can use. */
export const TUNE_RECALL_K = 30;

export const RRF_WEIGHTS: readonly number[] = [1, 2, 4, 8, 16, 32];
export const RRF_KS: readonly number[] = [10, 30, 60];
/** Convex λ from 0 to 1 in steps of 1/CONVEX_STEPS (0.05). */
export const CONVEX_STEPS = 20;

/** The fusions `eval retrieval --tune` tries: weighted RRF over RRF_WEIGHTS × RRF_KS, convex λ over 0, 0.05, …, 1. */
export function fusionGrid(): FusionSettings[] {
  const rrf = RRF_KS.flatMap((rrfK) => RRF_WEIGHTS.map((bm25Weight): FusionSettings => ({ method: "rrf", rrfK, bm25Weight })));
  // Rounded so that λ prints and stores as 0.35, not 0.35000000000000003.
  const convex = Array.from({ length: CONVEX_STEPS + 1 }, (_, i): FusionSettings => ({ method: "convex", bm25Weight: Math.round((i / CONVEX_STEPS) * 1e6) / 1e6 }));
  return [...rrf, ...convex];
}

/**
 * One labelled question's BM25 and dense candidate lists, fetched once with searchBm25/searchDense at the
 * depth searchHybrid uses: fusing them offline (fuseHits) gives exactly what searchHybrid would return.
 */
export interface TuneItem {
  readonly bm25: readonly SearchHit[];
  readonly dense: readonly SearchHit[];
  readonly gold: readonly string[];
}

export interface FusionScore {
  readonly fusion: FusionSettings;
  readonly ndcg10: number;
  readonly recall30: number;
}

/** How the eval cuts a ranking: `fetch` fused chunks, mapped to documents (first rank counts), the first `depth` kept. */
export interface TuneDepth {
  readonly fetch: number;
  readonly depth: number;
}

/** Mean doc-level nDCG@10 and Recall@30 of one fusion over the items (all with gold ids), as eval retrieval scores hybrid. */
export function scoreFusion(items: readonly TuneItem[], fusion: FusionSettings, { fetch, depth }: TuneDepth): FusionScore {
  if (items.length === 0) throw new RangeError("scoreFusion: no questions to score");
  let ndcg = 0;
  let recall = 0;
  for (const item of items) {
    if (item.gold.length === 0) throw new RangeError("scoreFusion: every question needs gold document ids");
    const ranked = dedupeRanking(fuseHits(item.bm25, item.dense, fetch, fusion).map((h) => h.docId)).slice(0, depth);
    const relevant = new Set(item.gold);
    ndcg += ndcgAtK(ranked, relevant, TUNE_NDCG_K);
    recall += recallAtK(ranked, relevant, TUNE_RECALL_K);
  }
  return { fusion, ndcg10: ndcg / items.length, recall30: recall / items.length };
}

/**
 * Orders fusions from simplest: fewer parameters first (convex has one, RRF two), then the nearer to
 * weighing both rankings alike (λ near 0.5; RRF weight near 1, then k near the usual 60). So a tie is won
 * by the configuration that assumes least about the data.
 */
export function fusionComplexity(f: FusionSettings): number {
  if (f.method === "convex") return Math.abs(f.bm25Weight - 0.5);
  return 10 + Math.abs(Math.log2(Math.max(f.bm25Weight, 1e-9))) + Math.abs(f.rrfK - 60) / 1000;
}

/** Scores closer than this are equal: sums of the same terms in another order differ by rounding only. */
const SCORE_TOLERANCE = 1e-9;

/** Best first: higher nDCG@10, then higher Recall@30, then the simpler fusion. */
export function compareFusionScores(a: FusionScore, b: FusionScore): number {
  if (Math.abs(a.ndcg10 - b.ndcg10) > SCORE_TOLERANCE) return b.ndcg10 - a.ndcg10;
  if (Math.abs(a.recall30 - b.recall30) > SCORE_TOLERANCE) return b.recall30 - a.recall30;
  return fusionComplexity(a.fusion) - fusionComplexity(b.fusion);
}

export interface TuneResult {
  /** Every fusion of the grid, best first. */
  readonly ranked: readonly FusionScore[];
  readonly chosen: FusionScore;
  /** The fusion the store used before tuning, scored the same way. */
  readonly before: FusionScore;
}

/** Scores every fusion of `grid` on the items and picks the best (see compareFusionScores). */
export function tuneFusion(items: readonly TuneItem[], grid: readonly FusionSettings[], before: FusionSettings, depth: TuneDepth): TuneResult {
  if (grid.length === 0) throw new RangeError("tuneFusion: the grid is empty");
  const ranked = grid.map((f) => scoreFusion(items, f, depth)).sort(compareFusionScores);
  const previous = scoreFusion(items, before, depth);
  // A recorded fusion may lie outside the grid; tuning must never replace it with one that scores worse.
  const keep = previous.ndcg10 >= ranked[0]!.ndcg10 - SCORE_TOLERANCE && previous.recall30 >= ranked[0]!.recall30 - SCORE_TOLERANCE;
  return { ranked, chosen: keep ? previous : ranked[0]!, before: previous };
}

/** The text report: the best `top` of the grid, the best of each method, and the change from before. */
export function formatTune(result: TuneResult, questions: number, storePath: string, top = 5): string {
  const row = (label: string, s: FusionScore) => `  ${label.padEnd(6)}  ${describeFusion(s.fusion).padEnd(28)}  ${s.ndcg10.toFixed(4)}  ${s.recall30.toFixed(4)}`;
  const bestOf = (method: string) => result.ranked.find((s) => s.fusion.method === method);
  const lines = [
    `tune: ${result.ranked.length} fusions scored on ${questions} questions (doc-level nDCG@${TUNE_NDCG_K}, then R@${TUNE_RECALL_K})`,
    `  ${"rank".padEnd(6)}  ${"fusion".padEnd(28)}  nDCG@${TUNE_NDCG_K}  R@${TUNE_RECALL_K}`,
    ...result.ranked.slice(0, top).map((s, i) => row(String(i + 1), s)),
  ];
  for (const method of ["rrf", "convex"]) {
    const best = bestOf(method);
    if (best && result.ranked.indexOf(best) >= top) lines.push(row(String(result.ranked.indexOf(best) + 1), best));
  }
  const delta = result.chosen.ndcg10 - result.before.ndcg10;
  lines.push(
    row("before", result.before),
    row("chosen", result.chosen),
    `tune: nDCG@${TUNE_NDCG_K} ${result.before.ndcg10.toFixed(4)} → ${result.chosen.ndcg10.toFixed(4)} (${delta >= 0 ? "+" : ""}${delta.toFixed(4)}); ` +
      `recorded ${describeFusion(result.chosen.fusion)} in ${storePath}: ask, search and serve on it use it for hybrid retrieval`,
    "",
  );
  return lines.join("\n");
}

/** The JSON form: the chosen and the previous fusion with their scores, and the whole grid, best first. */
export function tuneJson(result: TuneResult, questions: number) {
  const entry = (s: FusionScore) => ({ fusion: s.fusion, [`ndcg@${TUNE_NDCG_K}`]: s.ndcg10, [`recall@${TUNE_RECALL_K}`]: s.recall30 });
  return { questions, grid_size: result.ranked.length, before: entry(result.before), chosen: entry(result.chosen), grid: result.ranked.map(entry) };
}
