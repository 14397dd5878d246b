import { EngineContext, Model, resolveModel } from "@attr-rag/engine";
import { ChunkStore, createEmbedder, LocalIndex, NatsIndex, ShardedNatsIndex, type Embedder, type RemoteIndex } from "@attr-rag/index";
import { connectNats, ConnectionWatch, roleNatsWaitMs, type NatsConnection } from "@attr-rag/nats";
import { LocalSelector, NatsSelector } from "@attr-rag/selector";
import { LocalEngine, modelIdOf, NatsEngine } from "@attr-rag/worker";
import type { EngineJobs } from "@attr-rag/worker";
import type { Backends } from "../backends/Backends.js";
import { localReranker, NatsReranker } from "../backends/rerankBackends.js";
import { gatedEngine, InteractiveGate } from "@attr-rag/batch";
import type { GatewayConfig } from "../config/gatewayConfig.js";
import { withoutCredentials } from "@attr-rag/telemetry";
import type { PipelineRuntime } from "./pipelineRuntime.js";

/** A GGUF cross-encoder and the context that runs it. */
export interface Reranker {
  readonly id: string;
  readonly model: Model;
  readonly context: EngineContext;
}

/** What an embedded runtime holds open in this process. */
export interface LocalResources {
  readonly store: ChunkStore;
  readonly embedder: Embedder;
  readonly model: Model;
  readonly generator: EngineContext;
  readonly reranker: Reranker | undefined;
}

/**
 * What one pipeline runs on, opened once per process (server or CLI), shared by every request, disposed
 * once. Embedded (`open`): the store, its embedder, the generator and an optional re-ranker in this process,
 * behind in-process backends. Distributed (`connect`): a NATS connection behind NATS backends, and nothing
 * local. The pipeline sees only `backends`.
 */
export class Runtime implements AsyncDisposable, PipelineRuntime {
  #disposed?: Promise<void>;
  /**
   * Held open by every running interactive call (Ask, Attribute). Embedded, batch items' engine jobs wait
   * while it is; distributed, they go to the workers' batch lane instead, which workers serve second.
   */
  readonly interactive = new InteractiveGate();

  private constructor(
    readonly config: GatewayConfig,
    readonly backends: Backends,
    readonly local: LocalResources | undefined,
    /** Distributed: the NATS connection, its watch, and the index reached over it (also behind the gateway's IndexService). */
    readonly nats: { readonly connection: NatsConnection; readonly watch: ConnectionWatch; readonly index: RemoteIndex } | undefined,
    private readonly batchLane: (gate: InteractiveGate) => Pick<Backends, "engine" | "reranker">,
  ) {}

  /** The pipeline as batch items run it: the same backends, the engine (and re-ranker) in the batch lane. */
  get batchPipeline(): PipelineRuntime {
    return { config: this.config, backends: { ...this.backends, ...this.batchLane(this.interactive) } };
  }

  /** Embedded: opens everything the config names; on failure whatever was opened is closed again. */
  static async open(config: GatewayConfig, log: (line: string) => void = () => {}): Promise<Runtime> {
    if (config.nats !== undefined) return Runtime.connect(config, log);
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
      if (config.searchThreads > 0) await store.useSearchThreads(config.searchThreads);
      log(`loading model ${config.model}`);
      const model = await Model.load(resolveModel(config.model), { gpuLayers: config.gpuLayers });
      opened.push(model);
      const generator = await model.createContext({
        kind: "generate",
        contextSize: config.contextSize,
        sequences: config.sequences,
        // Concurrent Asks decode together on this one context (continuous batching); each job's default width
        // is its share of the sequences.
        jobs: Math.min(config.maxConcurrentAsks, 256),
        batchSize: config.batchSize,
        sampling: config.sampling,
        kvUnified: config.kvCache === "unified",
        flashAttention: config.flashAttention,
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
      const index = new LocalIndex(store, embedder);
      const engine = new LocalEngine(generator);
      const backends: Backends = {
        index,
        engine,
        selector: new LocalSelector(index),
        modelId: modelIdOf(model.info.path),
        ...(reranker !== undefined ? { reranker: localReranker(reranker.id, reranker.context) } : {}),
      };
      return new Runtime(config, backends, { store, embedder, model, generator, reranker }, undefined, (gate) => ({ engine: gatedEngine(engine, gate) }));
    } catch (err) {
      for (const r of opened.reverse()) await Promise.resolve(r[Symbol.asyncDispose]()).catch(() => {});
      throw err;
    }
  }

  /** Distributed: the index, the workers and the selector over NATS (config.nats); nothing opened here. */
  static async connect(config: GatewayConfig, log: (line: string) => void = () => {}): Promise<Runtime> {
    if (config.nats === undefined) throw new Error("Runtime.connect needs config.nats");
    log(`connecting to NATS at ${withoutCredentials(config.nats)}`);
    const connection = await connectNats({
      url: config.nats,
      name: "attr-rag-gateway",
      creds: config.natsCreds,
      user: config.natsUser,
      pass: config.natsPass,
      token: config.natsToken,
      nkey: config.natsNkey,
      tlsCa: config.natsTlsCa,
      waitForServerMs: roleNatsWaitMs(),
      onWaiting: log,
    });
    try {
      const watch = new ConnectionWatch(connection);
      const engine = await NatsEngine.connect(connection, watch, { log });
      const reranker = config.reranker !== undefined ? new NatsReranker(config.reranker, engine, connection) : undefined;
      const index = config.indexShards === undefined ? new NatsIndex(connection, watch) : new ShardedNatsIndex(connection, config.indexShards, watch);
      const backends: Backends = {
        index,
        engine,
        selector: new NatsSelector(connection, watch),
        modelId: config.model,
        ...(reranker !== undefined ? { reranker } : {}),
      };
      const batchLane = { engine: engine.inLane("batch"), ...(reranker !== undefined ? { reranker: reranker.inLane("batch") } : {}) };
      return new Runtime(config, backends, undefined, { connection, watch, index }, () => batchLane);
    } catch (err) {
      await connection.close();
      throw err;
    }
  }

  get distributed(): boolean {
    return this.local === undefined;
  }

  // The embedded resources, for the in-process IndexService and for tests; a distributed runtime has none.
  get store(): ChunkStore {
    return this.#local("store").store;
  }
  get embedder(): Embedder {
    return this.#local("embedder").embedder;
  }
  get model(): Model {
    return this.#local("model").model;
  }
  get generator(): EngineContext {
    return this.#local("generator").generator;
  }
  get reranker(): Reranker | undefined {
    return this.local?.reranker;
  }

  #local(what: string): LocalResources {
    if (this.local === undefined) throw new Error(`a distributed runtime has no local ${what}; it is reached over NATS`);
    return this.local;
  }

  dispose(): Promise<void> {
    this.#disposed ??= (async () => {
      if (this.nats !== undefined) await this.nats.connection.drain().catch(() => this.nats!.connection.close());
      const l = this.local;
      if (l === undefined) return;
      await l.reranker?.context.dispose();
      await l.reranker?.model.dispose();
      await l.generator.dispose();
      await l.model.dispose();
      await l.store.close();
      await l.embedder.dispose();
    })();
    return this.#disposed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose();
  }
}
