import { basename } from "node:path";
import { Model, resolveModel, type EngineContext } from "@attr-rag/engine";
import { EmbeddingError } from "../errors.js";
import type { Embedder } from "./Embedder.js";
import { l2Normalize } from "./normalize.js";

export interface GgufEmbedderOptions {
  /** Longest input in tokens; longer texts are truncated. Default 512 (BERT-family limit). */
  readonly maxTokens?: number;
  /** Texts per native call. Default 16. */
  readonly batchSize?: number;
  readonly threads?: number;
}

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
    this.id = `gguf:${basename(model.info.path)}@${model.info.nParams}`;
    this.dimensions = model.info.nEmbd;
  }

  /** Loads the model and an embedding context; engine errors (missing file, not a GGUF) pass through. */
  static async load(path: string, options: GgufEmbedderOptions = {}): Promise<GgufEmbedder> {
    const maxTokens = options.maxTokens ?? 512;
    const batchSize = options.batchSize ?? 16;
    const model = await Model.load(resolveModel(path));
    try {
      const settings = {
        kind: "embed" as const,
        contextSize: maxTokens * batchSize,
        batchSize: maxTokens,
        ubatchSize: maxTokens,
        sequences: batchSize,
        ...(options.threads ? { threads: options.threads } : {}),
      };
      let context = await model.createContext(settings);
      if (context.info.pooling <= 0) {
        // The model declares no pooling (a decoder such as llama): mean-pool its token embeddings.
        await context.dispose();
        context = await model.createContext({ ...settings, pooling: "mean" });
      }
      return new GgufEmbedder(model, context, batchSize);
    } catch (err) {
      await model.dispose();
      throw err;
    }
  }

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.#disposed) throw new EmbeddingError(`${this.id}: the embedder has been disposed`);
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.#batchSize) {
      const batch = texts.slice(start, start + this.#batchSize).map((t) => (t.trim() === "" ? " " : t));
      const vectors = await this.#context.embed(batch, { truncate: true, ...(signal ? { signal } : {}) });
      for (const v of vectors) out.push(l2Normalize(Float32Array.from(v)));
    }
    return out;
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
