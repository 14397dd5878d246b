// Public API of @attr-rag/worker. Siblings import only from here.
export { JobFailure } from "./jobFailure.js";
export type { EngineJobs, ProgressListener } from "./engineJobs.js";
export { LocalEngine } from "./localEngine.js";
export {
  isApproximateProto,
  JOB_STRATEGIES,
  screenOptionsProblem,
  strategyNameOf,
  strategyToProto,
  type JobStrategy,
} from "./generationOptions.js";
export { addCounters } from "./counters.js";
export { closingDelta } from "./closingDelta.js";
export { modelIdOf } from "./modelId.js";
export { EMBED_KINDS, GENERATOR_KINDS, RERANK_KINDS, startWorker, type RunningWorker, type WorkerOptions } from "./nats/workerService.js";
export { runRerankJob } from "./runRerankJob.js";
export { WorkerEmbedder, type LocalEmbedder } from "./nats/workerEmbedder.js";
export { NatsEngine } from "./nats/natsEngine.js";
export { listWorkerStats, someWorkerServes } from "./nats/workerStats.js";
export { engineWorkerStats, type WorkerIdentity } from "./engineStats.js";
export { engineSources, type EngineSource } from "./engineMetrics.js";
export { observedJob } from "./jobTelemetry.js";
