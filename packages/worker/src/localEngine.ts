import type { GenerationJob, GenerationResult, LikelihoodJob, LikelihoodResult, OcclusionJob, OcclusionResult } from "@attr-rag/contracts";
import type { EngineContext } from "@attr-rag/engine";
import type { EngineJobs, ProgressListener } from "./engineJobs.js";
import { runGenerationJob } from "./runGenerationJob.js";
import { runLikelihoodJob } from "./runLikelihoodJob.js";
import { runOcclusionJob } from "./runOcclusionJob.js";

/** Engine jobs on this process's engine context (embedded mode; and what a worker runs for each job). */
export class LocalEngine implements EngineJobs {
  constructor(
    readonly context: EngineContext,
    readonly workerId = "local",
  ) {}

  occlude(job: OcclusionJob, onProgress: ProgressListener, signal: AbortSignal): Promise<OcclusionResult> {
    return runOcclusionJob(this.context, job, onProgress, signal, this.workerId);
  }

  generate(job: GenerationJob, onProgress: ProgressListener, signal: AbortSignal): Promise<GenerationResult> {
    return runGenerationJob(this.context, job, onProgress, signal, this.workerId);
  }

  likelihood(job: LikelihoodJob, signal: AbortSignal): Promise<LikelihoodResult> {
    return runLikelihoodJob(this.context, job, signal, this.workerId);
  }
}
