import type { FusedHit } from "./reciprocalRankFusion.js";

/** One entry of a scored ranking: higher score is better, the list is best first. */
export interface ScoredId {
  readonly id: string;
  readonly score: number;
}

/**
 * Convex combination of normalised scores (Bruch et al. 2023, "An Analysis of Fusion Functions for Hybrid
 * Retrieval"): fused = λ·bm25' + (1 − λ)·dense', where x' is the score min-max normalised over its own list.
 * Unlike RRF, which sees only ranks, it keeps how far apart the hits of a list are: a hit one list puts far
 * ahead stays ahead of hits the other list merely orders slightly differently.
 *
 * A list with one hit, or with all scores equal, carries no spread to normalise: every hit gets 1. A
 * document missing from a list gets 0 from it (the list's floor, as it was not retrieved). `ranks` holds
 * the 1-based position in [bm25, dense] (undefined where absent); an id repeated within a list counts once,
 * at its first position. Ties: better best rank first, then id, so the result never depends on Map order.
 */
export function convexScoreFusion(bm25: readonly ScoredId[], dense: readonly ScoredId[], bm25Weight: number): FusedHit[] {
  if (!(Number.isFinite(bm25Weight) && bm25Weight >= 0 && bm25Weight <= 1)) {
    throw new RangeError(`convexScoreFusion: bm25Weight (λ) must be a number from 0 to 1, got ${bm25Weight}`);
  }
  const hits = new Map<string, { score: number; ranks: (number | undefined)[]; best: number }>();
  const lists = [bm25, dense] as const;
  lists.forEach((list, r) => {
    const weight = r === 0 ? bm25Weight : 1 - bm25Weight;
    const first = firstOccurrences(list, r === 0 ? "bm25" : "dense");
    const scores = first.map((e) => e.score);
    const min = Math.min(...scores);
    const spread = Math.max(...scores) - min;
    first.forEach((entry, position) => {
      const normalised = spread > 0 ? (entry.score - min) / spread : 1;
      const rank = position + 1;
      const hit = hits.get(entry.id) ?? { score: 0, ranks: [undefined, undefined], best: rank };
      hit.score += weight * normalised;
      hit.ranks[r] = rank;
      hit.best = Math.min(hit.best, rank);
      hits.set(entry.id, hit);
    });
  });
  return [...hits.entries()]
    .sort(([idA, a], [idB, b]) => b.score - a.score || a.best - b.best || (idA < idB ? -1 : idA > idB ? 1 : 0))
    .map(([id, h]) => ({ id, score: h.score, ranks: h.ranks }));
}

function firstOccurrences(list: readonly ScoredId[], name: string): ScoredId[] {
  const seen = new Set<string>();
  const out: ScoredId[] = [];
  for (const entry of list) {
    if (!Number.isFinite(entry.score)) throw new RangeError(`convexScoreFusion: ${name} score of "${entry.id}" is ${entry.score}; scores must be finite`);
    if (seen.has(entry.id)) continue;
    seen.add(entry.id);
    out.push(entry);
  }
  return out;
}
