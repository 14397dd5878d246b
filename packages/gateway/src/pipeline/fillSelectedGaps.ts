import type { FilledGap, GapFill } from "@attr-rag/contracts";
import { fillGaps, type Chunk, type ChunkSet } from "@attr-rag/core";
import { chunkConverter, DocumentNotFoundError } from "@attr-rag/index";
import type { Runtime } from "../runtime/Runtime.js";
import { promptSafe } from "./buildPrompt.js";
import type { AnswerBlock } from "./citations.js";

export interface FilledContext {
  event: GapFill;
  /** The final context: one block per run of consecutive chunks, documents in the order of their first kept set. */
  blocks: AnswerBlock[];
  warnings: string[];
}

const key = (docId: string, ordinal: number) => `${docId}\u0000${ordinal}`;

/**
 * Step 7b: between kept chunks of one document at most `maxGap` apart, adds the chunks in between and lays
 * the result out as answer blocks. Kept chunks keep the text that was attributed (retrieval's copy); only the
 * gap chunks are read from the store, so a document changed meanwhile through IndexService cannot swap the
 * attributed text; a gap that can no longer be read is left open with a warning.
 */
export function fillSelectedGaps(runtime: Runtime, kept: readonly ChunkSet[], maxGap: number): FilledContext {
  const keptChunks = new Map<string, { chunk: Chunk; setId: string }>();
  for (const set of kept) for (const c of set.chunks) keptChunks.set(key(c.docId, c.ordinal), { chunk: c, setId: set.id });
  const plan = fillGaps(kept.flatMap((s) => s.chunks.map((c) => ({ docId: c.docId, ordinal: c.ordinal }))), maxGap);
  const toProto = chunkConverter(runtime.store);
  const warnings: string[] = [];
  const blocks: AnswerBlock[] = [];
  const added: Chunk[] = [];
  const gaps: FilledGap[] = [];
  for (const span of plan.spans) {
    const run: Chunk[] = [];
    for (let o = span.first; o <= span.last; o++) {
      const hit = keptChunks.get(key(span.docId, o));
      if (hit !== undefined) {
        run.push(hit.chunk);
        continue;
      }
      let last = o;
      while (last + 1 <= span.last && !keptChunks.has(key(span.docId, last + 1))) last++;
      const gap = readGap(runtime, span.docId, o, last);
      if (gap.length === last - o + 1) {
        run.push(...gap);
        added.push(...gap);
        gaps.push({
          range: { docId: span.docId, firstOrdinal: o, lastOrdinal: last },
          beforeSetId: keptChunks.get(key(span.docId, o - 1))?.setId ?? "",
          afterSetId: keptChunks.get(key(span.docId, last + 1))?.setId ?? "",
          addedChunkIds: gap.map((c) => c.id),
        });
      } else {
        warnings.push(`gap fill: chunks ${o}..${last} of ${span.docId} are no longer in the store (the document changed); the gap was left open`);
        if (run.length > 0) blocks.push(toBlock(run.splice(0)));
      }
      o = last;
    }
    if (run.length > 0) blocks.push(toBlock(run));
  }
  return { event: { gaps, addedChunks: added.map(toProto) }, blocks, warnings };
}

function readGap(runtime: Runtime, docId: string, first: number, last: number): Chunk[] {
  try {
    return runtime.store.getChunks(docId, first, last);
  } catch (err) {
    if (err instanceof DocumentNotFoundError) return [];
    throw err;
  }
}

function toBlock(chunks: readonly Chunk[]): AnswerBlock {
  return { text: promptSafe(chunks.map((c) => c.text).join("\n")), chunkIds: chunks.map((c) => c.id), chunkTexts: chunks.map((c) => c.text) };
}
