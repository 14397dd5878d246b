// Step 8 of the pipeline (and the baselines' only generation) as one engine job: an answer from the given
// context blocks, laid out as attribution lays them out, streamed as JobProgress deltas.
import { FinishReason, type GenerationJob, type GenerationResult } from "@attr-rag/contracts";
import { concatTokens, type EngineContext } from "@attr-rag/engine";
import { answerToProto } from "./answers.js";
import { closingDelta } from "./closingDelta.js";
import { generationCounters } from "./counters.js";
import type { ProgressListener } from "./engineJobs.js";
import { generationOptions } from "./generationOptions.js";
import { jobPrompt, setsThatFit } from "./jobPrompt.js";
import { observedJob } from "./jobTelemetry.js";

export function runGenerationJob(ctx: EngineContext, job: GenerationJob, onProgress: ProgressListener, signal: AbortSignal, workerId = "local"): Promise<GenerationResult> {
  return observedJob("generation", ctx, job, () => generationJob(ctx, job, onProgress, signal, workerId));
}

async function generationJob(ctx: EngineContext, job: GenerationJob, onProgress: ProgressListener, signal: AbortSignal, workerId: string): Promise<GenerationResult> {
  const { maxTokens } = generationOptions(job.generation);
  const { tokens } = jobPrompt(ctx.model, job);
  // Blocks that do not fit are left out, lowest-ranked (last) first; the result says how many were used.
  const fit = setsThatFit(tokens, maxTokens, ctx.info.sequenceCells);
  const prompt = concatTokens([tokens.prefix, ...tokens.blocks.slice(0, fit), tokens.suffix]);
  let sequence = 0;
  const emit = (text: string, finishReason: FinishReason) =>
    onProgress({ jobId: job.jobId, sequence: sequence++, progress: { $case: "answerDelta", value: { text, finishReason } }, workerId, attempt: 0 });
  const started = performance.now();
  const stream = ctx.generate(prompt, { maxTokens, signal });
  let emitted = "";
  let next = await stream.next();
  while (!next.done) {
    if (next.value.text !== "") {
      emitted += next.value.text;
      emit(next.value.text, FinishReason.FINISH_REASON_UNSPECIFIED);
    }
    next = await stream.next();
  }
  const answer = answerToProto(next.value);
  const closing = closingDelta(answer, emitted);
  emit(closing.text, closing.finishReason);
  return {
    jobId: job.jobId,
    requestId: job.requestId,
    workerId,
    model: job.model ?? "",
    answer,
    counters: generationCounters(prompt.length, next.value, performance.now() - started),
    setsUsed: fit,
    sequenceCells: ctx.info.sequenceCells,
  };
}
