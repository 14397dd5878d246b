import type { Retrieved } from "@attr-rag/contracts";
import type { RetrievedChunk } from "@attr-rag/core";
import type { PipelineRuntime } from "../runtime/pipelineRuntime.js";
import type { ResolvedAsk } from "./resolveAsk.js";
import { modeToProto } from "./retrievalMode.js";

export interface Retrieval {
  chunks: RetrievedChunk[];
  /** The question's embedding (the fallback re-ranker uses it). */
  queryVector: Float32Array;
  event: Retrieved;
}

/** Step 1: top-k chunks for the question in the configured mode, as core chunks and as the `retrieved` event. */
export async function retrieve(runtime: PipelineRuntime, ask: ResolvedAsk, k: number, signal: AbortSignal): Promise<Retrieval> {
  signal.throwIfAborted();
  const response = await runtime.backends.index.search(
    {
      query: ask.question,
      options: { k, mode: modeToProto(ask.mode), filter: { docIds: ask.docIds, sources: ask.sources }, ...(ask.rrfK !== undefined ? { rrfK: ask.rrfK } : {}) },
      includeQueryEmbedding: true,
    },
    signal,
  );
  const chunks = response.chunks.map((scored, i): RetrievedChunk => {
    const c = scored.chunk!;
    return { id: c.id, docId: c.docId, ordinal: c.ordinal, start: c.start, end: c.end, text: c.text, rank: i + 1, score: scored.score };
  });
  return {
    chunks,
    queryVector: Float32Array.from(response.queryEmbedding?.values ?? []),
    event: { chunks: response.chunks, mode: response.mode, embedder: response.embedder },
  };
}

/** The store's embedder on texts, wherever the store is. */
export async function embed(runtime: PipelineRuntime, texts: readonly string[], signal: AbortSignal): Promise<Float32Array[]> {
  if (texts.length === 0) return [];
  const response = await runtime.backends.index.embedTexts({ texts: [...texts] }, signal);
  return response.embeddings.map((e) => Float32Array.from(e.values));
}
