import type { ModelHandle } from "./modelHandle.js";

/**
 * Turns a stream of generated tokens into text deltas. Deltas are differences of the detokenized prefix:
 * that is exactly how the final text is made (the tokenizer may drop a leading space or join bytes), so
 * they add up to it. A token that ends inside a multi-byte character adds "" until the character is whole.
 */
export class TextDeltas {
  readonly #model: ModelHandle;
  readonly #tokens: number[] = [];
  #emitted = "";

  constructor(model: ModelHandle) {
    this.#model = model;
  }

  /** The text the token adds (possibly ""). */
  push(token: number): string {
    this.#tokens.push(token);
    const text = this.#model.detokenize(Int32Array.from(this.#tokens));
    if (text.endsWith("\uFFFD") || !text.startsWith(this.#emitted)) return "";
    const delta = text.slice(this.#emitted.length);
    this.#emitted = text;
    return delta;
  }

  /**
   * What the detokenized tokens hold beyond the emitted deltas (a held-back partial character, as the
   * answer text itself shows it), marking it emitted: the closing delta of an answer.
   */
  rest(): string {
    const text = this.#model.detokenize(Int32Array.from(this.#tokens));
    if (!text.startsWith(this.#emitted)) return "";
    const delta = text.slice(this.#emitted.length);
    this.#emitted = text;
    return delta;
  }

  /** The text emitted so far (the concatenated deltas). */
  get emitted(): string {
    return this.#emitted;
  }

  get tokenCount(): number {
    return this.#tokens.length;
  }
}
