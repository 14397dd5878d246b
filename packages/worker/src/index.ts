// Public API of @attr-rag/worker. Siblings import only from here.
export { JobFailure, invalidJob, jobTooLarge } from "./jobFailure.js";
export type { EngineJobs, ProgressListener } from "./engineJobs.js";
export { LocalEngine } from "./localEngine.js";
export { runOcclusionJob } from "./runOcclusionJob.js";
export { runGenerationJob } from "./runGenerationJob.js";
export { runLikelihoodJob } from "./runLikelihoodJob.js";
export {
  generationOptions,
  isApproximateProto,
  JOB_STRATEGIES,
  screenOptionsProblem,
  strategyNameOf,
  strategyOf,
  strategyToProto,
  type JobStrategy,
} from "./generationOptions.js";
export { addCounters, countNearTies, generationCounters, NEAR_TIE_MARGIN, occlusionCounters } from "./counters.js";
export { closingDelta, finishReasonOf } from "./closingDelta.js";
export { answerToProto, divergence } from "./answers.js";
export { jobPrompt, occlusionSetsThatFit, setsThatFit } from "./jobPrompt.js";
export { modelIdOf } from "./modelId.js";
export { startWorker, type RunningWorker, type WorkerOptions } from "./nats/workerService.js";
export { NatsEngine } from "./nats/natsEngine.js";
export { listWorkerStats } from "./nats/workerStats.js";
export { engineWorkerStats, type WorkerIdentity } from "./engineStats.js";
