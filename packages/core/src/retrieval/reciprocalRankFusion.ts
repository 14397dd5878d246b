export const DEFAULT_RRF_K = 60;

export interface FusedHit {
  readonly id: string;
  /** Higher is better. RRF: Σ over rankings of weight / (k + rank), rank 1-based; convexScoreFusion: its weighted sum. */
  readonly score: number;
  /** Rank of the id in each input ranking (undefined where it is absent). */
  readonly ranks: readonly (number | undefined)[];
}

/**
 * Reciprocal rank fusion (Cormack et al. 2009): fuses rankings (best first) by Σ w_r / (k + rank).
 * k damps the head of each list so no single ranking dominates; 60 is the paper's value. Weights (default 1
 * each) let a stronger ranking count more. Ties: better best rank first, then first appearance, so the
 * result is deterministic.
 */
export function reciprocalRankFusion(
  rankings: readonly (readonly string[])[],
  k: number = DEFAULT_RRF_K,
  weights?: readonly number[],
): FusedHit[] {
  if (!(Number.isFinite(k) && k >= 0)) throw new RangeError(`reciprocalRankFusion: k must be a finite number ≥ 0, got ${k}`);
  if (weights !== undefined) {
    if (weights.length !== rankings.length) throw new RangeError(`reciprocalRankFusion: ${weights.length} weights for ${rankings.length} rankings`);
    if (weights.some((w) => !(Number.isFinite(w) && w >= 0))) throw new RangeError("reciprocalRankFusion: weights must be finite numbers ≥ 0");
  }
  const hits = new Map<string, { score: number; ranks: (number | undefined)[]; best: number; seen: number }>();
  let seen = 0;
  rankings.forEach((ranking, r) => {
    const first = new Set<string>();
    ranking.forEach((id, position) => {
      if (first.has(id)) return; // a ranking names each id once; a repeat would be double counted
      first.add(id);
      const rank = position + 1;
      const hit = hits.get(id) ?? { score: 0, ranks: new Array(rankings.length).fill(undefined), best: rank, seen: seen++ };
      hit.score += (weights?.[r] ?? 1) / (k + rank);
      hit.ranks[r] = rank;
      hit.best = Math.min(hit.best, rank);
      hits.set(id, hit);
    });
  });
  return [...hits.entries()]
    .sort(([, a], [, b]) => b.score - a.score || a.best - b.best || a.seen - b.seen)
    .map(([id, h]) => ({ id, score: h.score, ranks: h.ranks }));
}
