import { availableParallelism } from "node:os";
import type { PromptSegments } from "@attr-rag/core";
import { readGgufHeader } from "./gguf/readHeader.js";
import { embedTexts, rerankDocuments, type EmbedOptions, type RerankOptions } from "./embed.js";
import { AbortError, DisposedError, EngineArgumentError, EngineError, EngineLimitError, fromNative } from "./errors.js";
import { generateTokens, type GenerateOptions, type GeneratedPiece, type GenerationResult } from "./generate.js";
import type { ModelHandle } from "./modelHandle.js";
import type { NativeContext, NativeContextInfo, NativeContextOptions, NativeSchedulerStats } from "./native/addonTypes.js";
import { nativeAddon } from "./native/loadAddon.js";
import { screenOcclusion, type ScreenOptions, type ScreenResult } from "./screen.js";
import { runForced, type ForcedOptions, type ForcedResult } from "./forced.js";
import { isTokenSegments, occlusionRequest, runOcclusion, type OcclusionOptions, type OcclusionResult } from "./occlude.js";
import { scoreContinuations, type ScoreOptions, type ScoreResult } from "./score.js";
import type { TokenSegments } from "./tokenSegments.js";

export type ContextKind = "generate" | "embed" | "rerank";

export interface ContextOptions {
  /** What the context runs. Embedding and re-ranking contexts pool outputs per sequence. Default "generate". */
  kind?: ContextKind;
  /** KV cache cells shared by all sequences (unified cache). Default 16384. */
  contextSize?: number;
  /** Tokens per llama_decode call. Default 512. */
  batchSize?: number;
  /** Tokens per physical micro-batch; embedding contexts need it ≥ the longest input. Default = batchSize. */
  ubatchSize?: number;
  /** Parallel sequences (the full prompt plus occluded ones per wave), shared by the jobs running together. Default 32. */
  sequences?: number;
  /**
   * Jobs expected to run together (continuous batching: every running job's tokens go into the same
   * llama_decode steps). A job's default width (maxParallel unset) is its share of the sequences and, with a
   * unified cache, of the KV cells: sequences / jobs. More calls may run at once; a job that does not fit
   * waits for room. Default 1: one job takes the whole context and the next waits for it.
   */
  jobs?: number;
  /** CPU threads. Default: all available. */
  threads?: number;
  /** Embedding pooling for kind "embed": "mean" | "cls" | "last", default the model's own. */
  pooling?: "mean" | "cls" | "last";
  /**
   * Flash attention: "auto" | "on" | "off". Default "off": llama.cpp's CPU flash-attention kernel tiles the
   * KV cache, so its rounding depends on the cache size and batched runs drift from one-by-one runs more
   * often (still only at near-ties). "on" is faster with large unified caches and on GPUs.
   */
  flashAttention?: "auto" | "on" | "off";
  /** KV cache precision: "f16" (default) or "f32". */
  kvType?: "f16" | "f32";
  /**
   * true: one KV cache whose cells the occluded sequences share with the full prompt (no copies), but
   * attention reads every used cell, so its cost grows with the whole workload. false (default): each
   * sequence has its own stream of contextSize / sequences cells and attends only to its own cells; the
   * shared prefix is copied stream to stream. On CPUs the second is several times faster.
   */
  kvUnified?: boolean;
  /**
   * Where each output row is read. "device" (default): llama.cpp computes the greedy token, the two largest
   * logits (the margin), the log-sum-exp and the logit of a teacher-forced token inside the decode graph, and
   * only those 24 bytes reach the host. "host": every row's whole logits (4 bytes × vocabulary) are copied and
   * scanned on the host, the reference path; needed only for whole distributions (forced's pairExact).
   * A device that lacks one of the ops falls back to "host" (info.sampling and info.samplingWhy say so).
   */
  sampling?: "device" | "host";
}

const MAX_SEQUENCES = 256;

/**
 * One llama.cpp context. Generation, occlusion and scoring calls run together: the native scheduler admits each
 * job while its sequences and KV cells fit (the others wait, first come first served) and decodes every running
 * job's tokens in the same llama_decode steps. Embedding and re-ranking calls run one at a time, in call order.
 */
export class EngineContext implements AsyncDisposable {
  #native: NativeContext | undefined;
  #queue: Promise<void> = Promise.resolve();
  readonly #running = new Set<Promise<unknown>>();
  #nextJob = 1;
  readonly #onDispose: (c: EngineContext) => void;
  readonly model: ModelHandle;
  readonly kind: ContextKind;
  readonly options: Readonly<NativeContextOptions>;
  /** What llama.cpp actually allocated (context sizes are rounded up). */
  readonly info: Readonly<NativeContextInfo>;

  private constructor(model: ModelHandle, native: NativeContext, kind: ContextKind, options: NativeContextOptions, onDispose: (c: EngineContext) => void) {
    this.model = model;
    this.#native = native;
    this.kind = kind;
    this.options = options;
    this.info = native.info();
    this.#onDispose = onDispose;
  }

  static async create(model: ModelHandle, options: ContextOptions, onDispose: (c: EngineContext) => void): Promise<EngineContext> {
    const kind = options.kind ?? "generate";
    const resolved = resolveOptions(kind, options);
    if (kind === "rerank") await requireClassifierHead(model);
    const native = new (nativeAddon().AddonContext)(model.requireNative());
    try {
      await native.init(resolved);
    } catch (err) {
      native.dispose();
      throw fromNative(err, "creating the context");
    }
    return new EngineContext(model, native, kind, resolved, onDispose);
  }

  get disposed(): boolean {
    return this.#native === undefined;
  }

  /** A_full and one answer per occluded chunk set (see OcclusionOptions for the strategies). */
  async occlude(options: OcclusionOptions): Promise<OcclusionResult> {
    this.#requireKind("generate", "occlude");
    return await this.#run("occlusion", options.signal, (native) => runOcclusion(this, native, options));
  }

  /** Teacher-forced passes over approximate occluded caches (screening, fidelity against exact). */
  async forced(options: ForcedOptions): Promise<ForcedResult> {
    this.#requireKind("generate", "forced");
    return await this.#run("forced pass", options.signal, (native) => runForced(this, native, options));
  }

  /**
   * APPROXIMATE hierarchical occlusion: screens every set with one teacher-forced pass over approximate caches
   * and regenerates only the sets whose absence lowers log P(A_full) most (see screen.ts).
   */
  async screen(options: ScreenOptions): Promise<ScreenResult> {
    this.#requireKind("generate", "screen");
    return await screenOcclusion(this, options);
  }

  /** Greedy generation as an async iterator of tokens; its return value is the whole result. */
  generate(prompt: string | Int32Array, options: GenerateOptions = {}): AsyncGenerator<GeneratedPiece, GenerationResult> {
    this.#requireKind("generate", "generate");
    return generateTokens(this, prompt, options, (signal, job) => this.#run("generation", signal, job));
  }

  /** Σ log P(continuation | prompt with only the coalition's sets), per coalition, teacher-forced. */
  async scoreContinuations(options: ScoreOptions): Promise<ScoreResult> {
    this.#requireKind("generate", "scoreContinuations");
    return await this.#run("scoring", options.signal, (native) => scoreContinuations(this, native, options));
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    this.#requireKind("embed", "embed");
    return await this.#run("embedding", options.signal, (native) => embedTexts(this, native, texts, options));
  }

  async rerank(query: string, documents: readonly string[], options: RerankOptions = {}): Promise<number[]> {
    this.#requireKind("rerank", "rerank");
    return await this.#run("re-ranking", options.signal, (native) => rerankDocuments(this, native, query, documents, options));
  }

  /** Sequences that hold KV cells right now: 0 whenever no job runs (every job frees what it used). */
  sequencesInUse(): number {
    return this.#requireNative().sequencesInUse();
  }

  /**
   * The scheduler's counters: decode calls and the rows they carried, jobs admitted and waiting, reservations.
   * checkCells also counts sequences that hold KV cells while no job holds them (a leak; it waits for a
   * decode in flight, so keep it off hot paths).
   */
  schedulerStats(options: { checkCells?: boolean } = {}): SchedulerStats {
    const s = this.#requireNative().schedulerStats(options.checkCells ?? false);
    return { ...s, meanRowsPerCall: s.decodeCalls > 0 ? s.rows / s.decodeCalls : 0 };
  }

  /**
   * Whether `occlude(options)` fits this context's KV cache (the same check occlude makes first, with no
   * work done), so callers can size prompts, e.g. drop the lowest-ranked sets until it fits.
   */
  fitsOcclusion(options: OcclusionOptions): boolean {
    this.#requireKind("generate", "fitsOcclusion");
    const native = this.#requireNative();
    const segments = isTokenSegments(options.segments) ? options.segments : this.model.tokenizeSegments(options.segments);
    try {
      occlusionRequest(this, native, segments, options);
      return true;
    } catch (err) {
      if (err instanceof EngineLimitError) return false;
      throw err;
    }
  }

  /** Token segments of a text prompt, tokenized by this context's model. */
  tokenize(segments: PromptSegments): TokenSegments {
    return this.model.tokenizeSegments(segments);
  }

  /** Cancels the running job (it rejects with AbortError) and frees the context. Safe to call twice. */
  async dispose(): Promise<void> {
    const native = this.#native;
    if (!native) return;
    this.#native = undefined;
    native.dispose();
    this.#onDispose(this);
    await this.#queue.catch(() => undefined);
    await Promise.allSettled([...this.#running]);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  #requireKind(kind: ContextKind, what: string): void {
    if (this.kind !== kind) {
      throw new EngineArgumentError(`${what} needs a context of kind "${kind}"; this one is "${this.kind}" (model.createContext({ kind: "${kind}" }))`);
    }
  }

  #requireNative(): NativeContext {
    if (!this.#native || this.model.disposed) throw new DisposedError("the context (or its model) has been disposed");
    return this.#native;
  }

  async #run<T>(what: string, signal: AbortSignal | undefined, job: (native: NativeContext) => Promise<T>): Promise<T> {
    if (this.kind === "generate") return await this.#runTogether(what, signal, job);
    return await this.#runQueued(what, signal, job);
  }

  // No queue here: the native scheduler admits the job when it fits and decodes it with the others.
  async #runTogether<T>(what: string, signal: AbortSignal | undefined, job: (native: NativeContext) => Promise<T>): Promise<T> {
    const native = this.#requireNative();
    if (signal?.aborted) throw new AbortError(`${what} was aborted before it started`);
    const id = this.#nextJob;
    this.#nextJob = this.#nextJob >= 1 << 29 ? 1 : this.#nextJob + 1;
    const onAbort = () => native.cancel(id);
    signal?.addEventListener("abort", onAbort, { once: true });
    const run = (async () => {
      try {
        return await job(jobNative(native, id));
      } catch (err) {
        throw err instanceof EngineError ? err : fromNative(err, what);
      } finally {
        signal?.removeEventListener("abort", onAbort);
      }
    })();
    this.#running.add(run);
    try {
      return await run;
    } finally {
      this.#running.delete(run);
    }
  }

  async #runQueued<T>(what: string, signal: AbortSignal | undefined, job: (native: NativeContext) => Promise<T>): Promise<T> {
    this.#requireNative();
    if (signal?.aborted) throw new AbortError(`${what} was aborted before it started`);
    const previous = this.#queue;
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    // The next job waits for this one *and* everything before it: a job aborted while still waiting
    // releases at once, but the job it waited for may still be running on the native context.
    this.#queue = previous.then(() => mine);
    try {
      await waitOrAbort(previous, signal, what);
      const native = this.#requireNative();
      const onAbort = () => native.cancel();
      signal?.addEventListener("abort", onAbort, { once: true });
      try {
        return await job(native);
      } catch (err) {
        throw err instanceof EngineError ? err : fromNative(err, what);
      } finally {
        signal?.removeEventListener("abort", onAbort);
      }
    } finally {
      release();
    }
  }
}

/** The native context as one job sees it: its calls carry the job's id, and cancel stops only this job. */
function jobNative(native: NativeContext, id: number): NativeContext {
  return {
    init: (o) => native.init(o),
    occlude: (request, onProgress) => native.occlude(request, onProgress, id),
    score: (request) => native.score(request, id),
    embed: (sequences) => native.embed(sequences, id),
    cellsNeeded: (request, parallel) => native.cellsNeeded(request, parallel),
    cancel: () => native.cancel(id),
    sequencesInUse: () => native.sequencesInUse(),
    schedulerStats: (checkCells) => native.schedulerStats(checkCells),
    info: () => native.info(),
    dispose: () => native.dispose(),
  };
}

export interface SchedulerStats extends NativeSchedulerStats {
  /** rows / decodeCalls: tokens per llama_decode call, the batching the scheduler achieved. */
  meanRowsPerCall: number;
}

/** Rank pooling on a model without a classification head yields a hidden-state value, not a relevance score. */
async function requireClassifierHead(model: ModelHandle): Promise<void> {
  const header = await readGgufHeader(model.info.path);
  if (!header.tensors.some((t) => t.name.startsWith("cls."))) {
    throw new EngineArgumentError(
      `${model.info.path} has no classification head (cls.* tensors), so it cannot re-rank; load a GGUF reranker model`,
    );
  }
}

function waitOrAbort(previous: Promise<void>, signal: AbortSignal | undefined, what: string): Promise<void> {
  if (!signal) return previous;
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => reject(new AbortError(`${what} was aborted while waiting for the context`));
    signal.addEventListener("abort", onAbort, { once: true });
    previous.then(
      () => {
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) onAbort();
        else resolve();
      },
      () => resolve(),
    );
  });
}

function resolveOptions(kind: ContextKind, o: ContextOptions): NativeContextOptions {
  const contextSize = o.contextSize ?? 16384;
  const batchSize = o.batchSize ?? 512;
  const ubatchSize = o.ubatchSize ?? batchSize;
  const sequences = o.sequences ?? 32;
  const threads = o.threads ?? availableParallelism();
  const jobs = o.jobs ?? 1;
  const int = (name: string, v: number, min: number, max: number) => {
    if (!Number.isInteger(v) || v < min || v > max) throw new EngineArgumentError(`${name} must be an integer in [${min}, ${max}], got ${v}`);
  };
  int("contextSize", contextSize, 64, 1 << 22);
  int("batchSize", batchSize, 1, 1 << 16);
  int("ubatchSize", ubatchSize, 1, batchSize);
  int("sequences", sequences, 1, MAX_SEQUENCES);
  if (kind === "generate" && (o.kvUnified === false || o.kvUnified === undefined)) {
    if (contextSize / sequences < 64) {
      throw new EngineArgumentError(`with one KV stream per sequence each of the ${sequences} sequences gets contextSize / sequences = ${Math.floor(contextSize / sequences)} cells; raise contextSize`);
    }
  }
  int("threads", threads, 1, 1024);
  int("jobs", jobs, 1, MAX_SEQUENCES);
  // Rank pooling attaches a reranker's classification head; embeddings use the model's pooling unless chosen.
  const pooling = kind === "rerank" ? 4 : kind === "embed" && o.pooling ? { mean: 1, cls: 2, last: 3 }[o.pooling] : -1;
  if (pooling === undefined) throw new EngineArgumentError(`pooling must be "mean", "cls" or "last"`);
  const flash = { auto: -1, on: 1, off: 0 }[o.flashAttention ?? "off"];
  const kvType = { f32: 0, f16: 1 }[o.kvType ?? "f16"];
  if (kvType === undefined) throw new EngineArgumentError(`kvType must be "f16" or "f32"`);
  if (flash === undefined) throw new EngineArgumentError(`flashAttention must be "auto", "on" or "off"`);
  const sampling = o.sampling ?? "device";
  if (sampling !== "device" && sampling !== "host") throw new EngineArgumentError(`sampling must be "device" or "host"`);
  return {
    contextSize,
    batchSize,
    ubatchSize,
    sequences,
    threads,
    jobs,
    embeddings: kind !== "generate",
    pooling,
    flashAttention: flash,
    kvType,
    // Pooling needs each input whole in one micro-batch; per-sequence streams split a batch into equal
    // slices per sequence, which would cut inputs apart, so embedding contexts always use one cache.
    kvUnified: kind === "generate" ? (o.kvUnified ?? false) : true,
    sampling: kind === "generate" ? sampling : "host",
  };
}
