import type { GenerationJob, GenerationResult, JobProgress, LikelihoodJob, LikelihoodResult, OcclusionJob, OcclusionResult } from "@attr-rag/contracts";

/** Progress of a running job, in order: A_full (or answer) deltas, then occluded generations finished. */
export type ProgressListener = (progress: JobProgress) => void;

/**
 * The engine as the pipeline sees it: protobuf jobs in, protobuf results out, progress as it happens. The
 * in-process implementation runs them on this process's engine; the NATS one sends them to workers, which
 * run the very same code (runOcclusionJob, runGenerationJob, runLikelihoodJob). A job that cannot be done rejects with a
 * JobFailure; a cancelled one (signal) with the engine's AbortError.
 */
export interface EngineJobs {
  occlude(job: OcclusionJob, onProgress: ProgressListener, signal: AbortSignal): Promise<OcclusionResult>;
  generate(job: GenerationJob, onProgress: ProgressListener, signal: AbortSignal): Promise<GenerationResult>;
  /** The log-likelihood utility v(C) of each of the job's coalitions (no progress: one batched pass). */
  likelihood(job: LikelihoodJob, signal: AbortSignal): Promise<LikelihoodResult>;
}
