// The pipeline's re-rank stage as an engine job: the cross-encoder scores each text against the question on
// a rerank context, exactly as the embedded gateway calls it, so both modes rank the sets the same way.
import type { RerankJob, RerankResult } from "@attr-rag/contracts";
import type { EngineContext } from "@attr-rag/engine";
import { engineFailure, invalidJob } from "./jobFailure.js";
import { observedJob } from "./jobTelemetry.js";

export function runRerankJob(ctx: EngineContext, job: RerankJob, signal: AbortSignal, workerId = "local"): Promise<RerankResult> {
  return observedJob("rerank", ctx, job, () => rerankJob(ctx, job, signal, workerId));
}

async function rerankJob(ctx: EngineContext, job: RerankJob, signal: AbortSignal, workerId: string): Promise<RerankResult> {
  if (ctx.kind !== "rerank") throw invalidJob(`this worker's ${job.model ?? "model"} context is not a re-ranker (kind "${ctx.kind}"); start the worker with --reranker`);
  if (job.query.trim() === "") throw invalidJob("the re-rank job's query is empty");
  const started = performance.now();
  let scores: number[];
  try {
    scores = await ctx.rerank(job.query, job.texts, { truncate: job.truncate, signal });
  } catch (err) {
    throw engineFailure(err);
  }
  return {
    jobId: job.jobId,
    requestId: job.requestId,
    workerId,
    model: job.model ?? "",
    scores,
    elapsedMs: performance.now() - started,
  };
}
