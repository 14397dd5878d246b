import type { FilledGap, GapFill } from "@attr-rag/contracts";
import { fillGaps, type Chunk, type ChunkSet } from "@attr-rag/core";
import { chunkConverter } from "@attr-rag/index";
import type { Runtime } from "../runtime/Runtime.js";
import type { AnswerBlock } from "./citations.js";

export interface FilledContext {
  event: GapFill;
  /** The final context: one block per run of consecutive chunks, documents in first-selected order. */
  blocks: AnswerBlock[];
}

/**
 * Step 7b: between selected chunks of one document at most `maxGap` apart, adds the chunks in between
 * (fetched from the store by ordinal), and lays the result out as answer blocks.
 */
export function fillSelectedGaps(runtime: Runtime, kept: readonly ChunkSet[], maxGap: number): FilledContext {
  const setOf = new Map<string, string>();
  for (const set of kept) for (const c of set.chunks) setOf.set(`${c.docId}\u0000${c.ordinal}`, set.id);
  const plan = fillGaps(kept.flatMap((s) => s.chunks.map((c) => ({ docId: c.docId, ordinal: c.ordinal }))), maxGap);
  const toProto = chunkConverter(runtime.store);
  const blocks: AnswerBlock[] = [];
  const added: Chunk[] = [];
  const gaps: FilledGap[] = [];
  for (const span of plan.spans) {
    const chunks = runtime.store.getChunks(span.docId, span.first, span.last);
    blocks.push({ text: chunks.map((c) => c.text).join("\n"), chunkIds: chunks.map((c) => c.id), chunkTexts: chunks.map((c) => c.text) });
    let run: Chunk[] = [];
    const closeRun = () => {
      if (run.length === 0) return;
      const first = run[0]!.ordinal;
      const last = run[run.length - 1]!.ordinal;
      gaps.push({
        range: { docId: span.docId, firstOrdinal: first, lastOrdinal: last },
        beforeSetId: setOf.get(`${span.docId}\u0000${first - 1}`) ?? "",
        afterSetId: setOf.get(`${span.docId}\u0000${last + 1}`) ?? "",
        addedChunkIds: run.map((c) => c.id),
      });
      run = [];
    };
    for (const c of chunks) {
      if (setOf.has(`${c.docId}\u0000${c.ordinal}`)) {
        closeRun();
      } else {
        run.push(c);
        added.push(c);
      }
    }
    closeRun();
  }
  return { event: { gaps, addedChunks: added.map(toProto) }, blocks };
}
