import { FinishReason, type Answer, type AnswerDelta } from "@attr-rag/contracts";
import type { GeneratedSequence } from "@attr-rag/engine";

export function finishReasonOf(finish: GeneratedSequence["finish"]): FinishReason {
  return finish === "length" ? FinishReason.FINISH_REASON_LENGTH : FinishReason.FINISH_REASON_STOP;
}

/**
 * The last delta of an answer: whatever of the final text was not streamed yet (text held back at a
 * partial character, or progress that trailed the result) and why generation stopped. With it the deltas
 * add up to the answer text.
 */
export function closingDelta(answer: Pick<Answer, "text" | "finishReason">, emitted: string): AnswerDelta {
  return { text: answer.text.startsWith(emitted) ? answer.text.slice(emitted.length) : "", finishReason: answer.finishReason };
}
