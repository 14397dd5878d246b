import type { JobLane } from "@attr-rag/contracts";
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
  /**
   * `lane` says whose texts these are: "interactive" (a query someone waits for, the default) or "batch"
   * (ingest). An embedder that hands the work to workers queues it in that lane; one in process ignores it.
   */
  embed(texts: readonly string[], signal?: AbortSignal, lane?: JobLane): Promise<Float32Array[]>;
  dispose(): Promise<void>;
}
