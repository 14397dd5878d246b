/**
 * The native addon's surface (native/src/*.cpp), typed in one place. Native methods take typed arrays and
 * trust their arguments' shapes; this package validates everything before calling them, because a
 * GGML_ASSERT inside llama.cpp aborts the whole process. Ranges are half-open `[p0, p1)`.
 */
export interface NativeAddon {
  /** Loads ggml backends from `libDir` (default: the directory the addon was linked against). */
  init(libDir?: string): void;
  /** llama.cpp log lines at or above this level reach stderr: 0 none, 2 info, 3 warnings, 4 errors. */
  setLogLevel(level: number): void;
  devices(): NativeDevice[];
  /** Loads one more ggml backend library (libggml-cuda.so, libggml-vulkan.so) after init(). */
  loadBackend(path: string): { ok: boolean; error: string; backend: string; devices: number };
  readonly defaultLibraryDir: string;
  AddonModel: new () => NativeModel;
  AddonContext: new (model: NativeModel) => NativeContext;
}

export interface NativeDevice {
  name: string;
  /** The ggml backend that registered it: "CPU", "Vulkan", "CUDA", … */
  backend: string;
  description: string;
  type: "cpu" | "gpu" | "other";
  memoryFree: number;
  memoryTotal: number;
}

export interface NativeModelInfo {
  description: string;
  architecture: string;
  name: string;
  nVocab: number;
  nCtxTrain: number;
  nEmbd: number;
  nLayer: number;
  nParams: number;
  sizeBytes: number;
  bos: number;
  eos: number;
  sep: number;
  addBos: boolean;
  addEos: boolean;
  addSep: boolean;
  hasEncoder: boolean;
  hasDecoder: boolean;
  nClsOut: number;
  chatTemplate: string | null;
  rerankTemplate: string | null;
}

export interface NativeModel {
  load(path: string, options: { gpuLayers: number; vocabOnly: boolean; useMmap: boolean }): Promise<void>;
  tokenize(text: string, addSpecial: boolean, parseSpecial: boolean): Int32Array;
  detokenize(tokens: Int32Array, removeSpecial: boolean, unparseSpecial: boolean): string;
  /** Raw bytes of one token (possibly part of a UTF-8 sequence). */
  tokenPiece(token: number): Buffer;
  /** null when the model has no built-in template and none is given. */
  applyChatTemplate(messages: { role: string; content: string }[], addAssistant: boolean, template?: string): string | null;
  isEog(token: number): boolean;
  info(): NativeModelInfo;
  dispose(): void;
}

export interface NativeContextOptions {
  contextSize: number;
  batchSize: number;
  ubatchSize: number;
  sequences: number;
  threads: number;
  /** Jobs expected to run together: a job's default share of sequences and (unified cache) cells. */
  jobs: number;
  embeddings: boolean;
  /** llama_pooling_type: -1 model default, 0 none, 1 mean, 2 cls, 3 last, 4 rank. */
  pooling: number;
  /** llama_flash_attn_type: -1 auto, 0 off, 1 on. */
  flashAttention: number;
  /** ggml_type of the KV cache: 0 f32, 1 f16. */
  kvType: number;
  /** One cache shared by all sequences (true) or one stream of contextSize / sequences cells each (false). */
  kvUnified: boolean;
  /** Where each output row's greedy token, margin and log-probabilities are computed (see ContextOptions.sampling). */
  sampling: "device" | "host";
}

export interface NativeSchedulerStats {
  /** llama_decode calls the context made, and the tokens (rows) they carried. */
  decodeCalls: number;
  rows: number;
  /** Wall time inside those llama_decode calls. */
  decodeMs: number;
  /** Output rows handed to jobs, the bytes llama.cpp copied to the host for them, and host time reading them. */
  outputRows: number;
  bytesToHost: number;
  hostRowMs: number;
  /** Calls that carried tokens of more than one job. */
  multiJobCalls: number;
  jobsAdmitted: number;
  /** Jobs that waited for room before they were admitted. */
  jobsWaited: number;
  /** Prompt positions jobs copied from other running jobs instead of decoding them (cross-job prefix reuse). */
  prefixTokensShared: number;
  activeJobs: number;
  waitingJobs: number;
  sequencesReserved: number;
  /** Unified cache: KV cells the running jobs reserved (0 with per-sequence streams, where each sequence has its own). */
  cellsReserved: number;
  /** Sequences no job holds that still have KV cells: 0 unless cells leak (-1 unless checkCells was asked). */
  strayCellSequences: number;
  sequences: number;
  cells: number;
}

export interface NativeContextInfo {
  contextSize: number;
  /** KV cells one sequence can use: contextSize when unified, its stream's share otherwise. */
  sequenceCells: number;
  kvUnified: boolean;
  batchSize: number;
  ubatchSize: number;
  sequences: number;
  pooling: number;
  threads: number;
  /** The path that runs: "device" picks in the graph, or "host" scans of whole logits rows. */
  sampling: "device" | "host";
  /** Why a "device" request runs on the host path (the device lacks an op; an embedding context); "" otherwise. */
  samplingWhy: string;
}

export interface NativeOcclusionRequest {
  prefix: Int32Array;
  blocks: Int32Array[];
  suffix: Int32Array;
  /** Block indices to occlude. */
  occlude: Int32Array;
  givenFull?: Int32Array;
  givenFullEndsWithEog?: boolean;
  maxTokens: number;
  stops: string[];
  /** 0 naive, 1 prefix-shared, 2 speculative, 3 kv-reuse, 4 kv-mask (approximate). */
  strategy: number;
  /** Approximate strategies: tokens recomputed right after the occluded set and at the end of the prompt (< 0: the suffix). */
  gapTokens?: number;
  tailTokens?: number;
  /** Forced mode (approximate strategy and givenFull required): one token list per occluded set to teacher-force. */
  forced?: Int32Array[];
  /** Forced mode: also force an exact sequence per set and compare next-token distributions. */
  pairExact?: boolean;
  /** Exact strategies: teacher-force A_full after every prompt too (per-token log-probabilities in `scores`). */
  scoreAnswer?: boolean;
  draftInitial: number;
  draftMax: number;
  /** Occluded sequences per wave; 0 = as many as fit. */
  maxParallel: number;
}

export interface NativeSequence {
  tokens: Int32Array;
  /** Top-1 minus top-2 logit per step; one more than tokens when the answer ended with an end-of-generation token. */
  margins: Float32Array;
  finish: "eog" | "stop" | "length";
}

export interface NativeOcclusionCounters {
  promptTokens: number;
  tokensEvaluated: number;
  tokensReused: number;
  /** Of tokensReused, full-prompt positions copied from another running job that held the same prompt head. */
  prefixFromOtherJobs: number;
  draftProposed: number;
  draftAccepted: number;
  decodeSteps: number;
  prefillCalls: number;
  waves: number;
  /** scoreAnswer: rows added only to teacher-force A_full, and llama_decode calls that carried nothing else. */
  forcedRows: number;
  forcedCalls: number;
  prefillMs: number;
  fullMs: number;
  occludedMs: number;
  totalMs: number;
}

export interface NativeOcclusionResult {
  full: NativeSequence;
  occluded: NativeSequence[];
  counters: NativeOcclusionCounters;
  /** Forced mode only: per occluded set, sums over its steps. */
  forced?: NativeForcedStats[];
  /** Forced mode only: Σ log P(givenFull | full prompt). */
  fullLogProb?: number;
  /** scoreAnswer: log P(A_full[i] | prompt) per token of A_full. */
  scores?: NativeAnswerScores;
}

export interface NativeAnswerScores {
  /** Under the full prompt. */
  full: Float32Array;
  /** Under each occluded prompt, parallel to `occlude`. */
  occluded: Float32Array[];
  /** Under the prompt without any set. */
  empty: Float32Array;
}

export interface NativeForcedStats {
  steps: number;
  /** Σ log P(forced token) under the approximate cache, and under the exact one (pairExact). */
  logProb: number;
  exactLogProb: number;
  /** Σ KL(exact ‖ approximate) of next-token distributions, and steps whose top-1 tokens agree (pairExact). */
  kl: number;
  top1Agree: number;
}

export interface NativeScoreRequest {
  prefix: Int32Array;
  blocks: Int32Array[];
  suffix: Int32Array;
  continuation: Int32Array;
  /** Included block indices per coalition, ascending. */
  coalitions: Int32Array[];
  maxParallel: number;
}

export interface NativeScoreResult {
  logProbs: Float32Array[];
  totals: Float64Array;
  counters: { tokensEvaluated: number; tokensReused: number; decodeCalls: number; waves: number; totalMs: number };
}

export interface NativeEmbedResult {
  vectors: Float32Array[];
  tokensEvaluated: number;
  decodeCalls: number;
}

export interface NativeContext {
  init(options: NativeContextOptions): Promise<void>;
  /** onProgress(kind, index, token): kind 0 = an A_full token, 1 = occluded sequence `index` finished. */
  // jobId names the job for cancel(jobId); it must not be running already.
  occlude(
    request: NativeOcclusionRequest,
    onProgress?: (kind: number, index: number, token: number) => void,
    jobId?: number,
  ): Promise<NativeOcclusionResult>;
  score(request: NativeScoreRequest, jobId?: number): Promise<NativeScoreResult>;
  embed(sequences: Int32Array[], jobId?: number): Promise<NativeEmbedResult>;
  /** KV cells a request needs with `parallel` sequences per wave. */
  cellsNeeded(request: NativeOcclusionRequest | NativeScoreRequest, parallel: number): number;
  /** Cancels one job (its id) or, without one, every job. */
  cancel(jobId?: number): void;
  /** Sequences holding KV cells (0 when no job runs). */
  sequencesInUse(): number;
  /** checkCells: also count strayCellSequences (waits for a decode in flight). */
  schedulerStats(checkCells?: boolean): NativeSchedulerStats;
  info(): NativeContextInfo;
  dispose(): void;
}
