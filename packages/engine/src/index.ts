// Public API of @attr-rag/engine. Siblings import only from here.
export { GgufError } from "./gguf/ggufError.js";
export { readGgufHeader } from "./gguf/readHeader.js";
export { readTensorBytes, readTensorValues } from "./gguf/readTensor.js";
export {
  writeGguf,
  type GgufMetadataInput,
  type GgufTensorInput,
  type GgufWriteProgress,
  type GgufWriteResult,
  type TensorChunk,
  type TensorProducer,
  type WriteGgufOptions,
} from "./gguf/writeGguf.js";
export { ggufValue } from "./gguf/values.js";
export {
  GGML_TYPES,
  GGUF_DEFAULT_ALIGNMENT,
  type GgmlType,
  type GgufArrayValue,
  type GgufHeader,
  type GgufScalarType,
  type GgufTensorInfo,
  type GgufValue,
} from "./gguf/types.js";
export {
  PRESET_ARCHS,
  PRESET_SHAPES,
  SYNTH_ARCHS,
  SYNTH_PRESETS,
  SYNTH_QUANTS,
  type ModelShape,
  type SynthArch,
  type SynthPreset,
  type SynthQuant,
} from "./synth/presets.js";
export { DEFAULT_SYNTH_SEED, synthesizeModel, type SynthesizedModel, type SynthesizeModelOptions } from "./synth/synthesizeModel.js";
export {
  defaultSynthCacheDir,
  ensureSynthModel,
  synthModelFileName,
  type EnsuredSynthModel,
  type EnsureSynthModelOptions,
} from "./synth/ensureSynthModel.js";
export { resolveVocabDir } from "./synth/vocab.js";
export { Model, type ModelInfo, type ModelLoadOptions } from "./Model.js";
export type { ModelHandle } from "./modelHandle.js";
export type { ContextHandle } from "./contextHandle.js";
export { EngineContext, type ContextKind, type ContextOptions, type SchedulerStats } from "./EngineContext.js";
export type { ForcedOptions, ForcedResult } from "./forced.js";
export { chooseRegenerated, screeningStrategy, type ScreenOptions, type ScreenResult } from "./screen.js";
export type { NativeForcedStats as ForcedStats, NativeAnswerScores as AnswerScores } from "./native/addonTypes.js";
export {
  APPROXIMATE_STRATEGIES,
  EXACT_STRATEGIES,
  isApproximate,
  OCCLUSION_STRATEGIES,
  reuseUnsupported,
  type ApproximateStrategy,
  type OcclusionCounters,
  type OcclusionOptions,
  type OcclusionResult,
  type OcclusionStrategy,
} from "./occlude.js";
export type { GeneratedSequence } from "./sequenceText.js";
export type { GenerateOptions, GeneratedPiece, GenerationResult } from "./generate.js";
export { TextDeltas } from "./textDeltas.js";
export type { ScoreOptions, ScoreResult } from "./score.js";
export type { EmbedOptions, RerankOptions } from "./embed.js";
export { l2Normalize, openEmbedContext, unitEmbeddings, type EmbedContextOptions } from "./unitEmbeddings.js";
export { compareSequences, type Comparison, type Divergence, type SequenceLike } from "./divergence.js";
export { concatTokens, segmentsLength, type TokenSegments } from "./tokenSegments.js";
export {
  AbortError,
  DisposedError,
  EngineArgumentError,
  GpuBackendError,
  EngineError,
  EngineLimitError,
  ModelLoadError,
  ModelPullError,
} from "./errors.js";
export { defaultModelPath, listCachedNames, modelCacheDir, resolveModel, SHIPPED_MODEL_NAME, shippedModelPath, type Env } from "./models/modelLocator.js";
export { loadModelArg } from "./models/loadModelArg.js";
export { parseModelSource, type ModelSource } from "./models/modelSource.js";
export { pullModel, type PullOptions, type PullProgress, type PullResult } from "./models/pullModel.js";
export { describeModel, listCachedModels, type CachedModel, type PartialDownload } from "./models/cachedModels.js";
export type { NativeDevice } from "./native/addonTypes.js";
export { backendSelection } from "./native/loadAddon.js";
export { GPU_CHOICES, isSoftwareDevice, LLAMA_PACKAGES_VERSION, parseGpuChoice, type BackendSelection, type GpuChoice, type GpuKind } from "./native/gpuBackend.js";
export { OFFLOAD_MARGIN_BYTES, planOffload, type OffloadPlan } from "./native/offloadPlan.js";
export { llamaBuild, type LlamaBuild } from "./native/buildInfo.js";
export { listDevices } from "./native/devices.js";
