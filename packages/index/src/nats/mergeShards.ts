import type { ScoredChunk } from "@attr-rag/contracts";
import type { FusionSettings } from "../search/fusionSettings.js";
import { fuseHits } from "../search/fuseHits.js";
import type { SearchHit } from "../types.js";

/**
 * Every shard's list (each best first) merged into one, best first, cut to k. Scores are comparable across
 * shards (cosine; BM25 with the corpus-wide statistics), so this is the list one store would rank. Equal
 * scores keep the shards' order (shard 0's first), as ties in one store go by insertion order.
 */
export function mergeShardLists(lists: readonly (readonly ScoredChunk[])[], k: number): ScoredChunk[] {
  const all = lists.flatMap((list, shard) => list.map((c, at) => ({ c, shard, at })));
  all.sort((a, b) => b.c.score - a.c.score || a.shard - b.shard || a.at - b.at);
  // A chunk belongs to one shard; should two answer it (a store refused as another shard's is the guard, this
  // the last line), the merged list still holds it once, at its best place.
  const seen = new Set<string>();
  const merged: ScoredChunk[] = [];
  for (const { c } of all) {
    if (merged.length === k) break;
    const id = c.chunk?.id;
    if (id !== undefined && seen.has(id)) continue;
    if (id !== undefined) seen.add(id);
    merged.push(c);
  }
  return merged;
}

/** A merged list ranked afresh: rank and the mode's own rank are its place in the merged list. */
export function rerankMerged(list: readonly ScoredChunk[], mode: "bm25" | "dense"): ScoredChunk[] {
  return list.map((c, i) => {
    const rank = i + 1;
    return mode === "bm25" ? { ...c, rank, bm25Rank: rank, bm25Score: c.score } : { ...c, rank, denseRank: rank, denseScore: c.score };
  });
}

/** Hybrid over the merged lists: the same fusion (fuseHits) a store runs on its own two lists. */
export function fuseMerged(bm25: readonly ScoredChunk[], dense: readonly ScoredChunk[], k: number, fusion: FusionSettings): ScoredChunk[] {
  const byId = new Map<string, ScoredChunk>();
  for (const c of [...bm25, ...dense]) if (c.chunk !== undefined && !byId.has(c.chunk.id)) byId.set(c.chunk.id, c);
  const asHit = (c: ScoredChunk): SearchHit => ({ chunkId: c.chunk!.id, docId: c.chunk!.docId, ordinal: c.chunk!.ordinal, start: 0, end: 0, text: "", score: c.score });
  return fuseHits(bm25.map(asHit), dense.map(asHit), k, fusion).map((hit, i) => {
    const { chunk } = byId.get(hit.chunkId)!;
    const fused: ScoredChunk = { chunk, score: hit.score, rank: i + 1 };
    if (hit.ranks?.dense !== undefined) fused.denseRank = hit.ranks.dense;
    if (hit.ranks?.bm25 !== undefined) fused.bm25Rank = hit.ranks.bm25;
    return fused;
  });
}
