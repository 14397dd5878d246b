import { cosineSimilarity } from "@attr-rag/core";
import type { Runtime } from "../runtime/Runtime.js";

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
export async function rerankTexts(runtime: Runtime, question: string, queryVector: Float32Array, texts: readonly string[], signal: AbortSignal): Promise<RerankOutcome> {
  let scores: number[];
  let reranker: string;
  if (runtime.reranker !== undefined) {
    scores = await runtime.reranker.context.rerank(question, texts, { truncate: true, signal });
    reranker = runtime.reranker.id;
  } else {
    const vectors = texts.length === 0 ? [] : await runtime.embedder.embed(texts, signal);
    scores = vectors.map((v) => cosineSimilarity(queryVector, v));
    reranker = FALLBACK_RERANKER;
  }
  const order = scores.map((_, i) => i).sort((a, b) => scores[b]! - scores[a]! || a - b);
  return { order, scores, reranker, fallback: runtime.reranker === undefined };
}
