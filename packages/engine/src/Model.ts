import { open, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { plainChatTemplate, type ChatTemplate, type PromptSegments } from "@attr-rag/core";
import { EngineContext, type ContextOptions } from "./EngineContext.js";
import { AbortError, DisposedError, EngineArgumentError, ModelLoadError } from "./errors.js";
import type { ModelHandle, ModelInfo } from "./modelHandle.js";
import type { NativeModel } from "./native/addonTypes.js";
import { nativeAddon } from "./native/loadAddon.js";
import type { TokenSegments } from "./tokenSegments.js";

export interface ModelLoadOptions {
  /** Layers to offload to the GPU backend (ATTR_RAG_GPU, see gpuBackend.ts); 0 = CPU only, -1 = all. Default $ATTR_RAG_GPU_LAYERS, else 0. */
  gpuLayers?: number;
  /** Memory-map the weights (default true). */
  useMmap?: boolean;
  /** Load only the tokenizer (no weights): for tokenizing, not for generating. */
  vocabOnly?: boolean;
  signal?: AbortSignal;
}

export type { ModelInfo } from "./modelHandle.js";

/** A loaded GGUF model: tokenizer, chat template, and the factory of contexts that run inference. */
export class Model implements AsyncDisposable, ModelHandle {
  #native: NativeModel | undefined;
  readonly info: ModelInfo;
  readonly #contexts = new Set<EngineContext>();

  private constructor(native: NativeModel, info: ModelInfo) {
    this.#native = native;
    this.info = info;
  }

  static async load(path: string, options: ModelLoadOptions = {}): Promise<Model> {
    const full = resolve(path);
    await checkGguf(full);
    // ATTR_RAG_GPU_LAYERS (the gateway's gpuLayers setting from the environment) is every load's default, so
    // a whole process (a test suite on a GPU backend included) can run offloaded without passing it around.
    const fromEnv = process.env.ATTR_RAG_GPU_LAYERS;
    const gpuLayers = options.gpuLayers ?? (fromEnv !== undefined && fromEnv.trim() !== "" ? Number(fromEnv) : 0);
    if (!Number.isInteger(gpuLayers) || gpuLayers < -1) {
      throw new EngineArgumentError(`gpuLayers must be an integer ≥ -1 (−1 = all), got ${options.gpuLayers ?? `ATTR_RAG_GPU_LAYERS=${fromEnv}`}`);
    }
    if (options.signal?.aborted) throw new AbortError("model load was aborted");
    const native = new (nativeAddon().AddonModel)();
    try {
      await native.load(full, { gpuLayers, vocabOnly: options.vocabOnly ?? false, useMmap: options.useMmap ?? true });
    } catch (err) {
      throw new ModelLoadError((err as Error).message, { cause: err });
    }
    const model = new Model(native, { ...native.info(), path: full });
    if (options.signal?.aborted) {
      await model.dispose();
      throw new AbortError("model load was aborted");
    }
    return model;
  }

  get disposed(): boolean {
    return this.#native === undefined;
  }

  /** The native handle, or a DisposedError. For this package's contexts only. */
  requireNative(): NativeModel {
    if (!this.#native) throw new DisposedError(`the model ${this.info.path} has been disposed`);
    return this.#native;
  }

  tokenize(text: string, options: { addSpecial?: boolean; parseSpecial?: boolean } = {}): Int32Array {
    if (typeof text !== "string") throw new EngineArgumentError("tokenize: text must be a string");
    return this.requireNative().tokenize(text, options.addSpecial ?? false, options.parseSpecial ?? false);
  }

  detokenize(tokens: Int32Array | readonly number[], options: { removeSpecial?: boolean; unparseSpecial?: boolean } = {}): string {
    const arr = tokens instanceof Int32Array ? tokens : Int32Array.from(tokens);
    this.checkTokens(arr, "detokenize");
    return this.requireNative().detokenize(arr, options.removeSpecial ?? false, options.unparseSpecial ?? false);
  }

  /** Raw bytes of one token; pieces of one character can span tokens, so decode with a streaming TextDecoder. */
  tokenPiece(token: number): Buffer {
    this.checkTokens(Int32Array.of(token), "tokenPiece");
    return this.requireNative().tokenPiece(token);
  }

  isEndOfGeneration(token: number): boolean {
    return this.requireNative().isEog(token);
  }

  /** The model's chat template as core's ChatTemplate, or the plain layout when the model has none. */
  chatTemplate(): ChatTemplate {
    const native = this.requireNative();
    if (this.info.chatTemplate === null) return plainChatTemplate;
    return (messages) => {
      const text = native.applyChatTemplate(messages.map((m) => ({ role: m.role, content: m.content })), true);
      return text ?? plainChatTemplate(messages);
    };
  }

  /**
   * Tokenizes prompt segments for the engine. The prefix gets the model's BOS and may contain template
   * tokens; chunk-set text is tokenized as plain text, so a document can never inject control tokens.
   */
  tokenizeSegments(segments: PromptSegments): TokenSegments {
    return {
      prefix: this.tokenize(segments.prefix, { addSpecial: true, parseSpecial: true }),
      blocks: segments.blocks.map((b) => this.tokenize(b, { addSpecial: false, parseSpecial: false })),
      suffix: this.tokenize(segments.suffix, { addSpecial: false, parseSpecial: true }),
    };
  }

  /** Throws when a token id is outside the vocabulary (llama.cpp would assert on it). */
  checkTokens(tokens: Int32Array, what: string): void {
    const n = this.info.nVocab;
    for (let i = 0; i < tokens.length; i++) {
      const t = tokens[i]!;
      if (t < 0 || t >= n) throw new EngineArgumentError(`${what}: token id ${t} at index ${i} is outside the vocabulary [0, ${n})`);
    }
  }

  async createContext(options: ContextOptions = {}): Promise<EngineContext> {
    const context = await EngineContext.create(this, options, (c) => this.#contexts.delete(c));
    this.#contexts.add(context);
    return context;
  }

  /** Disposes the model's contexts (cancelling their work) and frees the weights. Safe to call twice. */
  async dispose(): Promise<void> {
    if (!this.#native) return;
    await Promise.all([...this.#contexts].map((c) => c.dispose()));
    this.#native.dispose();
    this.#native = undefined;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }
}

async function checkGguf(path: string): Promise<void> {
  let size: number;
  try {
    const s = await stat(path);
    if (!s.isFile()) throw new ModelLoadError(`${path} is not a file; give the path of a .gguf model`);
    size = s.size;
  } catch (err) {
    if (err instanceof ModelLoadError) throw err;
    throw new ModelLoadError(`cannot read the model file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  const handle = await open(path, "r");
  try {
    const magic = Buffer.alloc(4);
    await handle.read(magic, 0, 4, 0);
    if (size < 24 || magic.toString("latin1") !== "GGUF") {
      throw new ModelLoadError(`${path} is not a GGUF file (it does not start with "GGUF"); convert the model to GGUF first`);
    }
  } finally {
    await handle.close();
  }
}
