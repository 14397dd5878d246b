import type { Embedder } from "@attr-rag/index";

/**
 * Sentence embeddings of A_full and every A_-j for the cosine metric, so that α_cos behaves like the other
 * metrics at the edges: an answer equal to A_full gets A_full's vector (α = 0), an empty answer next to a
 * non-empty one gets the zero vector (cosine 0, α = 1), and an empty A_full matches only empty answers.
 * Each distinct non-empty text is embedded once.
 */
export async function answerEmbeddings(embedder: Embedder, full: string, occluded: readonly string[], signal: AbortSignal) {
  const zero = new Float32Array(embedder.dimensions);
  if (full.trim() === "") {
    const unit = new Float32Array(embedder.dimensions);
    unit[0] = 1;
    return { full: unit, occluded: occluded.map((t) => (t.trim() === "" ? unit : zero)) };
  }
  const distinct = [...new Set([full, ...occluded].filter((t) => t.trim() !== ""))];
  const vectors = await embedder.embed(distinct, signal);
  const byText = new Map(distinct.map((t, i) => [t, vectors[i]!]));
  return { full: byText.get(full)!, occluded: occluded.map((t) => byText.get(t) ?? zero) };
}
