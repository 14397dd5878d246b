import type { Answer } from "@attr-rag/contracts";
import type { GeneratedSequence } from "@attr-rag/engine";
import { finishReasonOf } from "./closingDelta.js";

/** A generated sequence as the protobuf Answer (near-ties are counted in the job's counters). */
export function answerToProto(a: GeneratedSequence): Answer {
  return { text: a.text, tokenIds: Array.from(a.tokens), finishReason: finishReasonOf(a.finish), nearTies: [] };
}

/** Where an occluded answer first leaves A_full (token index), or undefined when the two are identical. */
export function divergence(a: ArrayLike<number>, full: ArrayLike<number>): number | undefined {
  let at = 0;
  while (at < a.length && at < full.length && a[at] === full[at]) at++;
  return at === a.length && at === full.length ? undefined : at;
}
