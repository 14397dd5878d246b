import type { ChunkSet, RetrievedChunk } from "./chunkSet.js";

/**
 * Groups retrieved chunks into chunk sets: chunks of one document whose ordinals are consecutive form one
 * set (57 and 58 → one set; 57 and 59 → two). A chunk retrieved twice counts once, at its best rank.
 * Sets come back in retrieval order (by best rank), which is the order re-ranking starts from.
 */
export function alignChunkSets(retrieved: readonly RetrievedChunk[]): ChunkSet[] {
  const byChunk = new Map<string, RetrievedChunk>();
  for (const chunk of retrieved) {
    validate(chunk);
    const key = `${chunk.docId}\u0000${chunk.ordinal}`;
    const seen = byChunk.get(key);
    if (!seen || chunk.rank < seen.rank) byChunk.set(key, chunk);
  }

  const byDoc = new Map<string, RetrievedChunk[]>();
  for (const chunk of byChunk.values()) {
    const list = byDoc.get(chunk.docId) ?? [];
    list.push(chunk);
    byDoc.set(chunk.docId, list);
  }

  const sets: ChunkSet[] = [];
  for (const [docId, chunks] of byDoc) {
    chunks.sort((a, b) => a.ordinal - b.ordinal);
    let run: RetrievedChunk[] = [];
    for (const chunk of chunks) {
      const last = run[run.length - 1];
      if (last && chunk.ordinal !== last.ordinal + 1) {
        sets.push(makeSet(docId, run));
        run = [];
      }
      run.push(chunk);
    }
    if (run.length > 0) sets.push(makeSet(docId, run));
  }
  return sets.sort((a, b) => a.bestRank - b.bestRank);
}

function makeSet(docId: string, chunks: RetrievedChunk[]): ChunkSet {
  const firstOrdinal = chunks[0]!.ordinal;
  const lastOrdinal = chunks[chunks.length - 1]!.ordinal;
  const ranks = chunks.map((c) => c.rank);
  return {
    id: `${docId}#${firstOrdinal}-${lastOrdinal}`,
    docId,
    firstOrdinal,
    lastOrdinal,
    chunks,
    ranks,
    bestRank: Math.min(...ranks),
  };
}

function validate(chunk: RetrievedChunk): void {
  if (!Number.isInteger(chunk.ordinal) || chunk.ordinal < 0) {
    throw new RangeError(`alignChunkSets: chunk "${chunk.id}" has invalid ordinal ${chunk.ordinal}; ordinals are integers ≥ 0`);
  }
  if (!Number.isInteger(chunk.rank) || chunk.rank < 1) {
    throw new RangeError(`alignChunkSets: chunk "${chunk.id}" has invalid rank ${chunk.rank}; ranks are 1-based integers`);
  }
}
