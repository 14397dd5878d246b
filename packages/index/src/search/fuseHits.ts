import { reciprocalRankFusion } from "@attr-rag/core";
import type { SearchHit } from "../types.js";

/** Hybrid ranking: reciprocal rank fusion of a BM25 and a dense ranking (core's RRF), cut to k. */
export function fuseHits(bm25: readonly SearchHit[], dense: readonly SearchHit[], k: number, rrfK: number): SearchHit[] {
  const byId = new Map<string, SearchHit>();
  for (const hit of [...bm25, ...dense]) if (!byId.has(hit.chunkId)) byId.set(hit.chunkId, hit);
  const fused = reciprocalRankFusion([bm25.map((h) => h.chunkId), dense.map((h) => h.chunkId)], rrfK);
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
