import { cosineSimilarity } from "@attr-rag/core";
import type { PipelineRuntime } from "../runtime/pipelineRuntime.js";
import { engineCall } from "./engineCalls.js";
import { embed } from "./retrieve.js";

/** SPEC section 6: the re-ranker id reported when no cross-encoder is configured. */
export const FALLBACK_RERANKER = "fallback:bi-encoder";

export interface RerankOutcome {
  /** Indices into the input texts, best first. */
  order: number[];
  /** Score of each input text (input order). */
  scores: number[];
  reranker: string;
  fallback: boolean;
}

/**
 * Scores (question, text) pairs with the GGUF cross-encoder when one is configured, otherwise by cosine of
 * bi-encoder embeddings (the store's embedder) — and says which in the outcome. Ties keep input order.
 */
export async function rerankTexts(runtime: PipelineRuntime, question: string, queryVector: Float32Array, texts: readonly string[], signal: AbortSignal): Promise<RerankOutcome> {
  let scores: number[];
  let reranker: string;
  const crossEncoder = runtime.backends.reranker;
  if (crossEncoder !== undefined) {
    scores = await engineCall(() => crossEncoder.rerank(question, texts, signal));
    reranker = crossEncoder.id;
  } else {
    scores = (await embed(runtime, texts, signal)).map((v) => cosineSimilarity(queryVector, v));
    reranker = FALLBACK_RERANKER;
  }
  const order = scores.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
  return { order, scores, reranker, fallback: crossEncoder === undefined };
}
