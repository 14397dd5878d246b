import { basename } from "node:path";
import { EngineContext, Model, resolveModel } from "@attr-rag/engine";
import { ChunkStore, createEmbedder, LocalIndex, type Embedder } from "@attr-rag/index";
import { LocalSelector } from "@attr-rag/selector";
import { LocalEngine } from "@attr-rag/worker";
import type { Backends } from "../backends/Backends.js";
import type { GatewayConfig } from "../config/gatewayConfig.js";

/** A GGUF cross-encoder and the context that runs it. */
export interface Reranker {
  readonly id: string;
  readonly model: Model;
  readonly context: EngineContext;
}

/**
 * The open resources one pipeline runs on, embedded: the store, its embedder, the generator and an optional
 * re-ranker, and the in-process backends over them. Opened once per process (server or CLI), shared by every
 * request, disposed once.
 */
export class Runtime implements AsyncDisposable {
  #disposed?: Promise<void>;
  readonly backends: Backends;

  private constructor(
    readonly config: GatewayConfig,
    readonly store: ChunkStore,
    readonly embedder: Embedder,
    readonly model: Model,
    readonly generator: EngineContext,
    readonly reranker: Reranker | undefined,
  ) {
    const index = new LocalIndex(store, embedder);
    this.backends = {
      index,
      engine: new LocalEngine(generator),
      selector: new LocalSelector(index),
      modelId: basename(model.info.path).replace(/\.gguf$/i, ""),
      ...(reranker !== undefined ? { reranker: { id: reranker.id, rerank: (question, texts, signal) => reranker.context.rerank(question, texts, { truncate: true, signal }) } } : {}),
    };
  }

  /** Opens everything the config names; on failure whatever was opened is closed again. */
  static async open(config: GatewayConfig, log: (line: string) => void = () => {}): Promise<Runtime> {
    const opened: AsyncDisposable[] = [];
    try {
      log(`opening store ${config.store}`);
      const embedder = await createEmbedder(config.embedder);
      opened.push(embedder);
      const store = await ChunkStore.open(config.store, {
        embedder: { id: embedder.id, dimensions: embedder.dimensions },
        embed: (texts) => embedder.embed(texts),
      });
      opened.push(store);
      log(`loading model ${config.model}`);
      const model = await Model.load(resolveModel(config.model), { gpuLayers: config.gpuLayers });
      opened.push(model);
      const generator = await model.createContext({
        kind: "generate",
        contextSize: config.contextSize,
        sequences: config.sequences,
        batchSize: config.batchSize,
        ...(config.threads > 0 ? { threads: config.threads } : {}),
      });
      opened.push(generator);
      let reranker: Reranker | undefined;
      if (config.reranker !== undefined) {
        log(`loading re-ranker ${config.reranker}`);
        const rerankModel = await Model.load(resolveModel(config.reranker), { gpuLayers: config.gpuLayers });
        opened.push(rerankModel);
        const context = await rerankModel.createContext({ kind: "rerank", ...(config.threads > 0 ? { threads: config.threads } : {}) });
        opened.push(context);
        reranker = { id: `gguf:${rerankModel.info.path.split("/").pop() ?? config.reranker}`, model: rerankModel, context };
      }
      return new Runtime(config, store, embedder, model, generator, reranker);
    } catch (err) {
      for (const r of opened.reverse()) await Promise.resolve(r[Symbol.asyncDispose]()).catch(() => {});
      throw err;
    }
  }

  dispose(): Promise<void> {
    this.#disposed ??= (async () => {
      await this.reranker?.context.dispose();
      await this.reranker?.model.dispose();
      await this.generator.dispose();
      await this.model.dispose();
      await this.store.close();
      await this.embedder.dispose();
    })();
    return this.#disposed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}
