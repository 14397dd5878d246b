import { CitationKind, type Citation } from "@attr-rag/contracts";
import { answerSentences, cosineSimilarity, type SentenceSpan as Span } from "@attr-rag/core";

/** Embeds texts with the store's embedder. */
export type EmbedTexts = (texts: readonly string[], signal: AbortSignal) => Promise<Float32Array[]>;

/** A block of the final prompt: its label is `[index + 1]`; its chunks are what a citation of it names. */
export interface AnswerBlock {
  readonly text: string;
  readonly chunkIds: readonly string[];
  /** Per-chunk texts, aligned with chunkIds (similarity citations pick the best chunk). */
  readonly chunkTexts: readonly string[];
}

/** Similarity citations below this cosine are not made: the sentence is left uncited. */
export const MIN_CITATION_SIMILARITY = 0.35;
const MAX_SENTENCES = 64;

/**
 * Citations of the final answer, only ever to chunks of its own context: a sentence with `[i]` markers cites
 * block i's chunks (MARKER); a sentence without markers cites the chunk most similar to it by the embedder's
 * cosine when that is at least MIN_CITATION_SIMILARITY (SIMILARITY).
 */
export async function citeAnswer(text: string, blocks: readonly AnswerBlock[], embed: EmbedTexts, signal: AbortSignal): Promise<Citation[]> {
  const sentences = answerSentences(text).slice(0, MAX_SENTENCES);
  const citations: Citation[] = [];
  const unmarked: Span[] = [];
  for (const s of sentences) {
    const ids: string[] = [];
    for (const m of s.text.matchAll(/\[(\d{1,4})\]/g)) {
      const block = blocks[Number(m[1]) - 1];
      if (block !== undefined) for (const id of block.chunkIds) if (!ids.includes(id)) ids.push(id);
    }
    if (ids.length > 0) citations.push({ start: s.start, end: s.end, chunkIds: ids, kind: CitationKind.CITATION_KIND_MARKER });
    else if (/[a-z0-9]/i.test(s.text)) unmarked.push(s);
  }
  const chunks = blocks.flatMap((b) => b.chunkIds.map((id, i) => ({ id, text: b.chunkTexts[i]! })));
  if (unmarked.length > 0 && chunks.length > 0) {
    const vectors = await embed([...unmarked.map((s) => s.text), ...chunks.map((c) => c.text)], signal);
    const chunkVectors = vectors.slice(unmarked.length);
    unmarked.forEach((s, i) => {
      let best = -1;
      let bestScore = -Infinity;
      chunkVectors.forEach((v, c) => {
        const score = cosineSimilarity(vectors[i]!, v);
        if (score > bestScore) [best, bestScore] = [c, score];
      });
      if (bestScore >= MIN_CITATION_SIMILARITY) {
        citations.push({ start: s.start, end: s.end, chunkIds: [chunks[best]!.id], kind: CitationKind.CITATION_KIND_SIMILARITY, score: bestScore });
      }
    });
  }
  return citations.sort((a, b) => a.start - b.start);
}
