import type { EmbedderInfo } from "../types.js";

/**
 * Turns texts into L2-normalised vectors, one per text, in order. Implementations keep heavy work off the
 * calling event loop (a worker thread or a native async worker). `dispose()` frees the model and is safe
 * to call twice; calls after it reject.
 */
export interface Embedder extends EmbedderInfo, AsyncDisposable {
  /** Stable name of the model and its settings; recorded by a store and checked on every open. */
  readonly id: string;
  readonly dimensions: number;
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
  dispose(): Promise<void>;
}
