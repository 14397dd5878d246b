import type { Chunk } from "../chunking/chunk.js";

/** A chunk as retrieval returned it: `rank` is its 1-based position in the retrieved list. */
export interface RetrievedChunk extends Chunk {
  readonly rank: number;
  readonly score: number;
}

/**
 * Retrieved chunks that are consecutive (by ordinal) in one document, treated as one unit of context.
 * `chunks` are in document order; `bestRank` is the best (lowest) retrieval rank among them.
 */
export interface ChunkSet {
  /** `<docId>#<firstOrdinal>-<lastOrdinal>`, stable for the same chunks. */
  readonly id: string;
  readonly docId: string;
  readonly firstOrdinal: number;
  readonly lastOrdinal: number;
  readonly chunks: readonly RetrievedChunk[];
  /** Retrieval ranks of the member chunks, in document order. */
  readonly ranks: readonly number[];
  readonly bestRank: number;
}

/** The set's text as the model sees it: member chunks in document order, one per line block. */
export function chunkSetText(set: ChunkSet): string {
  return set.chunks.map((c) => c.text).join("\n");
}
