// A_full's per-token log-probabilities (sentence-level attribution) as the job result carries them, with the
// offset of each token's text so the gateway can sum them per sentence without the model.
import type { AnswerTokenScores } from "@attr-rag/contracts";
import { TextDeltas, type AnswerScores, type ModelHandle } from "@attr-rag/engine";

/**
 * UTF-16 offset in the detokenized answer where each token's text begins. Offsets come from the same
 * prefix detokenization as the streamed deltas, so they index the answer text exactly; a token inside a
 * multi-byte character shows its text with the next token and gets that token's offset.
 */
export function tokenOffsets(model: ModelHandle, tokens: ArrayLike<number>): number[] {
  const deltas = new TextDeltas(model);
  const offsets: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    offsets.push(deltas.emitted.length);
    deltas.push(tokens[i]!);
  }
  // A held-back character shows at the end: the tokens that waited for it begin where it does.
  const end = deltas.emitted.length;
  return offsets.map((o) => Math.min(o, end));
}

/**
 * Token offsets moved into `text`, the answer as the caller holds it, when it holds the detokenized tokens
 * with only whitespace around them (a leading space the tokenizer drops); undefined otherwise.
 */
export function tokenOffsetsIn(text: string, model: ModelHandle, tokens: ArrayLike<number>): number[] | undefined {
  const detokenized = model.detokenize(Int32Array.from(tokens));
  const shift = text === detokenized ? 0 : text.indexOf(detokenized);
  if (shift < 0 || text.slice(0, shift).trim() !== "" || text.slice(shift + detokenized.length).trim() !== "") return undefined;
  return tokenOffsets(model, tokens).map((o) => o + shift);
}

export function answerScoresToProto(offsets: readonly number[], scores: AnswerScores): AnswerTokenScores {
  return {
    tokenOffsets: [...offsets],
    full: Array.from(scores.full),
    noContext: Array.from(scores.empty),
    withoutSet: scores.occluded.map((v) => ({ logProbs: Array.from(v) })),
  };
}
