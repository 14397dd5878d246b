import type { ChatTemplate, PromptSegments } from "@attr-rag/core";
import type { NativeModel, NativeModelInfo } from "./native/addonTypes.js";
import type { TokenSegments } from "./tokenSegments.js";

export type ModelInfo = NativeModelInfo & { readonly path: string };

/**
 * What a context and the operations on it need of their model: its tokenizer, template and native handle.
 * Model implements it; depending on this leaf instead of Model keeps Model (which creates contexts) and
 * the context code from importing each other.
 */
export interface ModelHandle {
  readonly info: ModelInfo;
  readonly disposed: boolean;
  requireNative(): NativeModel;
  tokenize(text: string, options?: { addSpecial?: boolean; parseSpecial?: boolean }): Int32Array;
  detokenize(tokens: Int32Array | readonly number[], options?: { removeSpecial?: boolean; unparseSpecial?: boolean }): string;
  tokenPiece(token: number): Buffer;
  isEndOfGeneration(token: number): boolean;
  chatTemplate(): ChatTemplate;
  tokenizeSegments(segments: PromptSegments): TokenSegments;
  checkTokens(tokens: Int32Array, what: string): void;
}
