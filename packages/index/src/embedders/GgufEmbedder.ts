import { basename } from "node:path";
import { ggufEmbedderId } from "@attr-rag/contracts";
import { Model, openEmbedContext, resolveModel, unitEmbeddings, type EmbedContextOptions, type EngineContext } from "@attr-rag/engine";
import { EmbeddingError } from "../errors.js";
import type { Embedder } from "./Embedder.js";

export type GgufEmbedderOptions = EmbedContextOptions;

/**
 * Any GGUF embedding model (bge, MiniLM, …) through @attr-rag/engine: an embed-kind context whose native
 * calls run off the event loop. Texts longer than `maxTokens` are truncated (their tail is not embedded).
 * The id `gguf:<file name>@<parameter count>` changes when the model file does. Models without a pooling
 * type of their own (decoders) are mean-pooled.
 */
export class GgufEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly #model: Model;
  readonly #context: EngineContext;
  readonly #batchSize: number;
  #disposed = false;

  private constructor(model: Model, context: EngineContext, batchSize: number) {
    this.#model = model;
    this.#context = context;
    this.#batchSize = batchSize;
    this.id = ggufEmbedderId(basename(model.info.path), model.info.nParams);
    this.dimensions = model.info.nEmbd;
  }

  /** Loads the model and an embedding context; engine errors (missing file, not a GGUF) pass through. */
  static async load(path: string, options: GgufEmbedderOptions = {}): Promise<GgufEmbedder> {
    const model = await Model.load(resolveModel(path));
    try {
      const { context, batchSize } = await openEmbedContext(model, options);
      return new GgufEmbedder(model, context, batchSize);
    } catch (err) {
      await model.dispose();
      throw err;
    }
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.#disposed) throw new EmbeddingError(`${this.id}: the embedder has been disposed`);
    return unitEmbeddings(this.#context, texts, this.#batchSize, signal);
  }

  /** Frees the context and the model. Safe to call twice. */
  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    await this.#model.dispose();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}
