/** Embeds non-empty texts with the store's embedder (in-process or through the index service). */
export type EmbedFn = (texts: readonly string[], signal: AbortSignal) => Promise<Float32Array[]>;

/**
 * Sentence embeddings of A_full and every A_-j for the cosine metric, so that α_cos behaves like the other
 * metrics at the edges: an answer equal to A_full gets A_full's vector (α = 0), an empty answer next to a
 * non-empty one gets the zero vector (cosine 0, α = 1), and an empty A_full matches only empty answers.
 * Each distinct non-empty text is embedded once.
 */
export async function answerEmbeddings(embed: EmbedFn, full: string, occluded: readonly string[], signal: AbortSignal) {
  if (full.trim() === "") {
    // Nothing to embed: any dimension gives the same cosines (1 between empties, 0 against the zero vector).
    const unit = Float32Array.of(1);
    return { full: unit, occluded: occluded.map((t) => (t.trim() === "" ? unit : Float32Array.of(0))) };
  }
  const distinct = [...new Set([full, ...occluded].filter((t) => t.trim() !== ""))];
  const vectors = await embed(distinct, signal);
  const zero = new Float32Array(vectors[0]!.length);
  const byText = new Map(distinct.map((t, i) => [t, vectors[i]!]));
  return { full: byText.get(full)!, occluded: occluded.map((t) => byText.get(t) ?? zero) };
}
