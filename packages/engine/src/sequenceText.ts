import type { ModelHandle } from "./modelHandle.js";
import type { NativeSequence } from "./native/addonTypes.js";

export interface GeneratedSequence {
  tokens: Int32Array;
  /** The answer text, cut before the first stop string. */
  text: string;
  finish: "eog" | "stop" | "length";
  /** Top-1 minus top-2 logit at each step (one more than tokens when the answer ended at end-of-generation). */
  margins: Float32Array;
}

export function decodeAnswer(model: ModelHandle, s: NativeSequence, stops: readonly string[]): GeneratedSequence {
  let text = model.detokenize(s.tokens);
  if (s.finish === "stop") {
    let cut = text.length;
    for (const stop of stops) {
      const at = text.indexOf(stop);
      if (at >= 0 && at < cut) cut = at;
    }
    text = text.slice(0, cut);
  }
  return { tokens: s.tokens, text, finish: s.finish, margins: s.margins };
}
