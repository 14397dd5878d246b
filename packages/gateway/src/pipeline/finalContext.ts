import type { Chunk as ProtoChunk, GapFill } from "@attr-rag/contracts";
import { fillGaps, type Chunk, type ChunkSet } from "@attr-rag/core";
import { promptSafe } from "./buildPrompt.js";
import type { AnswerBlock } from "./citations.js";

const key = (docId: string, ordinal: number) => `${docId}\u0000${ordinal}`;

/**
 * The final context: the kept sets' chunks plus the selector's gap fill, one block per run of consecutive
 * chunks, documents in the order of their first kept set. Kept chunks keep the text that was attributed
 * (retrieval's copy); a gap the selector could not fill splits the block there.
 */
export function finalContext(kept: readonly ChunkSet[], maxGap: number, gapFill: GapFill): AnswerBlock[] {
  const keptChunks = new Map<string, Chunk>();
  for (const set of kept) for (const c of set.chunks) keptChunks.set(key(c.docId, c.ordinal), c);
  const added = new Map<string, ProtoChunk>(gapFill.addedChunks.map((c) => [key(c.docId, c.ordinal), c]));
  const plan = fillGaps([...keptChunks.values()].map((c) => ({ docId: c.docId, ordinal: c.ordinal })), maxGap);
  const blocks: AnswerBlock[] = [];
  for (const span of plan.spans) {
    let run: { id: string; text: string }[] = [];
    for (let o = span.first; o <= span.last; o++) {
      const chunk = keptChunks.get(key(span.docId, o)) ?? added.get(key(span.docId, o));
      if (chunk !== undefined) run.push({ id: chunk.id, text: chunk.text });
      else if (run.length > 0) {
        blocks.push(toBlock(run));
        run = [];
      }
    }
    if (run.length > 0) blocks.push(toBlock(run));
  }
  return blocks;
}

function toBlock(chunks: readonly { id: string; text: string }[]): AnswerBlock {
  return { text: promptSafe(chunks.map((c) => c.text).join("\n")), chunkIds: chunks.map((c) => c.id), chunkTexts: chunks.map((c) => c.text) };
}
