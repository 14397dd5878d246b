// Sentence-level attribution as the pipeline returns it: per-token log-probabilities from the engine (inside
// the occlusion job for A_full, a likelihood job for the final answer) summed per sentence by core.
import { CitationKind, type AnswerTokenScores, type Citation, type EngineCounters, type SentenceAttributions } from "@attr-rag/contracts";
import { attributeSentences } from "@attr-rag/core";
import type { PipelineRuntime } from "../runtime/pipelineRuntime.js";
import type { AnswerBlock } from "./citations.js";
import { engineCall, newJobId } from "./engineCalls.js";

/** The sentences of `text` with each set's drop; `scores.tokenOffsets` index `text`. */
export function sentencesOf(text: string, setIds: readonly string[], scores: AnswerTokenScores, threshold: number): SentenceAttributions {
  const sentences = attributeSentences(
    text,
    { tokenOffsets: scores.tokenOffsets, full: scores.full, noContext: scores.noContext, withoutSet: scores.withoutSet.map((w) => w.logProbs) },
    threshold,
  );
  return {
    setIds: [...setIds],
    threshold,
    setChunks: [],
    sentences: sentences.map((s) => ({
      start: s.start,
      end: s.end,
      tokens: s.tokens,
      logProbFull: s.logProbFull,
      logProbNoContext: s.logProbNoContext,
      drops: s.drops,
      topSets: s.topSets,
      supported: s.supported,
    })),
  };
}

/**
 * Sentence-level attribution of an answer given its context blocks by one likelihood job: the answer's
 * tokens (or its text, tokenized by the worker) teacher-forced under every block, each block left out, and
 * none (n + 2 coalitions, prefix-shared). `why` says what stood in the way when there are no sentences.
 */
export async function sentencesByLikelihood(
  runtime: PipelineRuntime,
  requestId: string,
  question: string,
  sets: readonly { id: string; text: string }[],
  answer: { text: string; tokenIds?: readonly number[] },
  threshold: number,
  signal: AbortSignal,
): Promise<{ sentences?: SentenceAttributions; why?: string; counters?: EngineCounters }> {
  if (sets.length === 0) return { why: "sentence attribution: the answer has no context blocks" };
  if (answer.text.trim() === "" || answer.tokenIds?.length === 0) return { why: "sentence attribution: the answer is empty" };
  const all = sets.map((_, i) => i);
  const coalitions = [all, ...all.map((j) => all.filter((i) => i !== j)), []];
  const result = await engineCall(() =>
    runtime.backends.engine.likelihood(
      {
        jobId: newJobId("lik"),
        requestId,
        model: runtime.backends.modelId,
        context: { question, sets: sets.map((s) => ({ setId: s.id, segment: { content: { $case: "text", value: s.text } } })) },
        target: answer.tokenIds !== undefined ? { content: { $case: "tokens", value: { ids: [...answer.tokenIds] } } } : { content: { $case: "text", value: answer.text } },
        coalitions: coalitions.map((c) => ({ setIndices: c })),
        deadlineUnixMs: 0,
        perToken: true,
      },
      signal,
    ),
  );
  if (result.tokenOffsets.length !== result.targetTokens || result.tokenLogProbs.length !== coalitions.length) {
    return { why: "sentence attribution: the answer's tokens do not detokenize to its text", counters: result.counters! };
  }
  const lp = result.tokenLogProbs.map((t) => t.logProbs);
  const scores: AnswerTokenScores = {
    tokenOffsets: result.tokenOffsets,
    full: lp[0]!,
    noContext: lp[lp.length - 1]!,
    withoutSet: lp.slice(1, -1).map((logProbs) => ({ logProbs })),
  };
  return { sentences: sentencesOf(answer.text, sets.map((s) => s.id), scores, threshold), counters: result.counters! };
}

/**
 * ATTRIBUTION citations: a supported sentence cites the chunks of the blocks whose removal lowers it by more
 * than the threshold, largest drop first; the score is the largest drop (nats).
 */
export function attributionCitations(sentences: SentenceAttributions, blocks: readonly AnswerBlock[]): Citation[] {
  return sentences.sentences
    .filter((s) => s.supported)
    .map((s) => ({
      start: s.start,
      end: s.end,
      chunkIds: [...new Set(s.topSets.flatMap((j) => blocks[j]?.chunkIds ?? []))],
      kind: CitationKind.CITATION_KIND_ATTRIBUTION,
      score: s.drops[s.topSets[0]!]!,
    }));
}
