import type { Retrieved } from "@attr-rag/contracts";
import type { RetrievedChunk } from "@attr-rag/core";
import { toScoredChunks, type SearchHit } from "@attr-rag/index";
import type { Runtime } from "../runtime/Runtime.js";
import { modeToProto } from "./protoNames.js";
import type { ResolvedAsk } from "./resolveAsk.js";

export interface Retrieval {
  chunks: RetrievedChunk[];
  /** The question's embedding (the fallback re-ranker and citations use it too). */
  queryVector: Float32Array;
  event: Retrieved;
}

/** Step 1: top-k chunks for the question in the configured mode, as core chunks and as the `retrieved` event. */
export async function retrieve(runtime: Runtime, ask: ResolvedAsk, k: number, signal: AbortSignal): Promise<Retrieval> {
  const [queryVector] = await runtime.embedder.embed([ask.question], signal);
  signal.throwIfAborted();
  const filters = { k, ...(ask.docIds.length > 0 ? { docIds: ask.docIds } : {}), ...(ask.sources.length > 0 ? { sources: ask.sources } : {}) };
  const hits: SearchHit[] =
    ask.mode === "bm25"
      ? runtime.store.searchBm25(ask.question, filters)
      : ask.mode === "dense"
        ? runtime.store.searchDense(queryVector!, filters)
        : runtime.store.searchHybrid(ask.question, queryVector!, { ...filters, ...(ask.rrfK !== undefined ? { rrfK: ask.rrfK } : {}) });
  const chunks = hits.map((h, i): RetrievedChunk => ({ id: h.chunkId, docId: h.docId, ordinal: h.ordinal, start: h.start, end: h.end, text: h.text, rank: i + 1, score: h.score }));
  const scored = toScoredChunks(runtime.store, hits, modeToProto(ask.mode));
  return { chunks, queryVector: queryVector!, event: { chunks: scored, mode: modeToProto(ask.mode), embedder: ask.mode === "bm25" ? "" : runtime.embedder.id } };
}
