// The distributed index's embedding as an engine job: a worker's embed context turns the texts into unit
// vectors exactly as the index's own GgufEmbedder does (unitEmbeddings), so a chunk gets the same vector
// whether the index or a worker embedded it.
import { embedderToken, type EmbedJob, type EmbedResult } from "@attr-rag/contracts";
import { unitEmbeddings, type EngineContext } from "@attr-rag/engine";
import { engineFailure, invalidJob } from "./jobFailure.js";
import { observedJob } from "./jobTelemetry.js";

export function runEmbedJob(ctx: EngineContext, job: EmbedJob, signal: AbortSignal, workerId = "local"): Promise<EmbedResult> {
  return observedJob("embed", ctx, job, () => embedJob(ctx, job, signal, workerId));
}

async function embedJob(ctx: EngineContext, job: EmbedJob, signal: AbortSignal, workerId: string): Promise<EmbedResult> {
  if (ctx.kind !== "embed") throw invalidJob(`this worker's ${job.model ?? "model"} context is not an embedder (kind "${ctx.kind}"); start the worker with --embedder`);
  if (job.texts.length === 0) throw invalidJob("the embed job has no texts");
  // The subject names the embedder by its token; the job names it in full. They must agree, so a job can only
  // reach workers of the embedder that built the store.
  if (job.model !== undefined && embedderToken(job.embedder) !== job.model) {
    throw invalidJob(`the job is for embedder ${JSON.stringify(job.embedder)}, whose token is not ${job.model}`);
  }
  const started = performance.now();
  let vectors: Float32Array[];
  try {
    vectors = await unitEmbeddings(ctx, job.texts, ctx.info.sequences, signal);
  } catch (err) {
    throw engineFailure(err);
  }
  const dimensions = vectors[0]!.length;
  const values = new Array<number>(vectors.length * dimensions);
  vectors.forEach((v, i) => {
    for (let j = 0; j < dimensions; j++) values[i * dimensions + j] = v[j]!;
  });
  return {
    jobId: job.jobId,
    requestId: job.requestId,
    workerId,
    model: job.model ?? "",
    embedder: job.embedder,
    dimensions,
    values,
    elapsedMs: performance.now() - started,
  };
}
