// Step 7b: between kept chunks of one document at most `maxGap` apart, the chunks in between are fetched
// from the index. Only the gaps are read: kept chunks keep the text that was attributed. A gap that can no
// longer be read (the document changed meanwhile) is left open with a warning.
import { status } from "@grpc/grpc-js";
import type { Chunk, ChunkSet, FilledGap, GapFill, GetChunksRequest, GetChunksResponse } from "@attr-rag/contracts";
import { fillGaps } from "@attr-rag/core";
import { ServiceError } from "@attr-rag/index";

export type GetChunksFn = (request: GetChunksRequest, signal: AbortSignal) => Promise<GetChunksResponse>;

const key = (docId: string, ordinal: number) => `${docId}\u0000${ordinal}`;

export async function fillKeptGaps(kept: readonly ChunkSet[], maxGap: number, getChunks: GetChunksFn, signal: AbortSignal): Promise<{ gapFill: GapFill; warnings: string[] }> {
  const keptAt = new Map<string, string>();
  for (const set of kept) for (const c of set.chunks) keptAt.set(key(set.docId, c.ordinal), set.setId);
  const plan = fillGaps(kept.flatMap((s) => s.chunks.map((c) => ({ docId: s.docId, ordinal: c.ordinal }))), maxGap);
  const gaps: FilledGap[] = [];
  const added: Chunk[] = [];
  const warnings: string[] = [];
  for (const span of plan.spans) {
    for (let o = span.first; o <= span.last; o++) {
      if (keptAt.has(key(span.docId, o))) continue;
      let last = o;
      while (last + 1 <= span.last && !keptAt.has(key(span.docId, last + 1))) last++;
      const chunks = await readGap(getChunks, span.docId, o, last, signal);
      if (chunks.length === last - o + 1) {
        added.push(...chunks);
        gaps.push({
          range: { docId: span.docId, firstOrdinal: o, lastOrdinal: last },
          beforeSetId: keptAt.get(key(span.docId, o - 1)) ?? "",
          afterSetId: keptAt.get(key(span.docId, last + 1)) ?? "",
          addedChunkIds: chunks.map((c) => c.id),
        });
      } else {
        warnings.push(`gap fill: chunks ${o}..${last} of ${span.docId} are no longer in the store (the document changed); the gap was left open`);
      }
      o = last;
    }
  }
  return { gapFill: { gaps, addedChunks: added }, warnings };
}

async function readGap(getChunks: GetChunksFn, docId: string, first: number, last: number, signal: AbortSignal): Promise<Chunk[]> {
  try {
    return (await getChunks({ ranges: [{ docId, firstOrdinal: first, lastOrdinal: last }] }, signal)).chunks;
  } catch (err) {
    if (err instanceof ServiceError && err.code === status.NOT_FOUND) return [];
    throw err;
  }
}
