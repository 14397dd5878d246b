import { convexScoreFusion, reciprocalRankFusion, type FusedHit } from "@attr-rag/core";
import type { SearchHit } from "../types.js";
import type { FusionSettings } from "./fusionSettings.js";

export { DEFAULT_BM25_WEIGHT } from "./fusionSettings.js";

/** Candidates searchHybrid takes from each of BM25 and dense when the caller does not say: max(k, 50). */
export function hybridCandidates(k: number): number {
  return Math.max(k, 50);
}

/**
 * Hybrid ranking: BM25 and dense candidate lists (best first, as searchBm25/searchDense return them) fused by
 * `fusion` (core's RRF or convex score fusion), cut to k. Pure, so a tuner can replay searchHybrid on
 * candidate lists fetched once.
 */
export function fuseHits(bm25: readonly SearchHit[], dense: readonly SearchHit[], k: number, fusion: FusionSettings): SearchHit[] {
  const byId = new Map<string, SearchHit>();
  for (const hit of [...bm25, ...dense]) if (!byId.has(hit.chunkId)) byId.set(hit.chunkId, hit);
  const fused: FusedHit[] =
    fusion.method === "rrf"
      ? reciprocalRankFusion([bm25.map((h) => h.chunkId), dense.map((h) => h.chunkId)], fusion.rrfK, [fusion.bm25Weight, 1])
      : convexScoreFusion(
          bm25.map((h) => ({ id: h.chunkId, score: h.score })),
          dense.map((h) => ({ id: h.chunkId, score: h.score })),
          fusion.bm25Weight,
        );
  return fused.slice(0, k).map((f) => {
    const { ranks: _ranks, ...hit } = byId.get(f.id)!;
    const [bm25Rank, denseRank] = f.ranks;
    return {
      ...hit,
      score: f.score,
      ranks: { ...(bm25Rank !== undefined ? { bm25: bm25Rank } : {}), ...(denseRank !== undefined ? { dense: denseRank } : {}) },
    };
  });
}
