// Steps 4-5 of the pipeline as one engine job: A_full and every A_-j in one occlusion call (so the
// strategies' prefix sharing applies), streamed as JobProgress. The same function runs in the gateway's
// process (embedded) and in `attr-rag worker` (distributed).
import { FinishReason, type AnswerDelta, type JobProgress, type OcclusionJob, type OcclusionProgress, type OcclusionResult } from "@attr-rag/contracts";
import {
  isApproximate,
  reuseUnsupported,
  screeningStrategy,
  TextDeltas,
  type EngineContext,
  type OcclusionResult as EngineResult,
  type OcclusionStrategy,
  type ScreenResult,
} from "@attr-rag/engine";
import { answerToProto, divergence } from "./answers.js";
import { answerScoresToProto, tokenOffsets, tokenOffsetsIn } from "./answerTokenScores.js";
import { closingDelta } from "./closingDelta.js";
import { occlusionCounters } from "./counters.js";
import type { ProgressListener } from "./engineJobs.js";
import { generationOptions } from "./generationOptions.js";
import { invalidJob, jobTooLarge } from "./jobFailure.js";
import { jobPrompt, occlusionSetsThatFit } from "./jobPrompt.js";
import { observedJob } from "./jobTelemetry.js";

export function runOcclusionJob(ctx: EngineContext, job: OcclusionJob, onProgress: ProgressListener, signal: AbortSignal, workerId = "local"): Promise<OcclusionResult> {
  return observedJob("occlusion", ctx, job, () => occlusionJob(ctx, job, onProgress, signal, workerId));
}

async function occlusionJob(ctx: EngineContext, job: OcclusionJob, onProgress: ProgressListener, signal: AbortSignal, workerId: string): Promise<OcclusionResult> {
  const model = ctx.model;
  const { maxTokens, strategy, gapTokens, tailTokens, screen } = generationOptions(job.generation);
  const prompt = jobPrompt(model, job);
  let tokens = prompt.tokens;
  let setIds = prompt.setIds;
  const all = tokens.blocks.length;
  if (all === 0) throw invalidJob("the job has no context sets to occlude");
  if (job.occludeSetIndices.length > 0) throw invalidJob("occlude_set_indices is not supported: every set is occluded");
  // Screening runs A_full and the screening pass on an approximate cache, then regenerates with another strategy.
  const engineStrategies: OcclusionStrategy[] = screen ? [screeningStrategy(ctx.info.kvUnified), screen.regenerate] : [strategy as OcclusionStrategy];
  for (const s of engineStrategies) {
    if (!isApproximate(s)) continue;
    // Refused by name here: the fit check below would otherwise report a layout problem as a size problem.
    const why = reuseUnsupported(s, ctx.info.kvUnified, gapTokens ?? 0);
    if (why) throw invalidJob(`generation.strategy${screen ? " (screen)" : ""}: ${why}`);
  }
  const fit = occlusionSetsThatFit(ctx, tokens, maxTokens, engineStrategies);
  if (fit < all && !job.dropSetsThatDoNotFit) {
    throw jobTooLarge(
      `only the first ${fit} of ${all} sets fit one sequence of the generator context (${ctx.info.sequenceCells} tokens with the answer); ` +
        "send fewer or shorter sets, fewer max tokens, or raise the server's contextSize",
    );
  }
  if (fit < all) {
    tokens = { prefix: tokens.prefix, blocks: tokens.blocks.slice(0, fit), suffix: tokens.suffix };
    setIds = setIds.slice(0, fit);
  }
  const givenFull =
    job.fullAnswerText !== undefined
      ? { tokens: model.tokenize(job.fullAnswerText, { addSpecial: false, parseSpecial: false }), endedWithEog: true }
      : job.fullAnswerTokens !== undefined
        ? { tokens: Int32Array.from(job.fullAnswerTokens.ids), endedWithEog: true }
        : undefined;

  // Sentence-level attribution scores A_full inside this job, on exact strategies only.
  const skipped = !job.scoreAnswerTokens
    ? ""
    : screen
      ? "sentence attribution needs an exact strategy; screening runs on an approximate cache"
      : isApproximate(strategy)
        ? `sentence attribution needs an exact strategy, not the approximate ${strategy}`
        : givenFull !== undefined && givenFull.tokens.length > maxTokens
          ? `sentence attribution scores A_full within max tokens (${maxTokens}); the given A_full has ${givenFull.tokens.length}`
          : "";
  const scoreAnswer = job.scoreAnswerTokens && skipped === "";

  let sequence = 0;
  const emit = (progress: JobProgress["progress"]) => onProgress({ jobId: job.jobId, sequence: sequence++, progress, workerId, attempt: 0 });
  const emitDelta = (value: AnswerDelta) => emit({ $case: "answerDelta", value });
  const emitCount = (value: OcclusionProgress) => emit({ $case: "occlusion", value });
  const deltas = new TextDeltas(model);
  // A_full's deltas come first, then occlusion progress (the documented event order). Every strategy finishes
  // A_full before it reports the first occluded answer (naive and speculative generate it first, prefix-shared
  // decodes it in the first wave and reports after the wave), so that report closes A_full.
  let fullClosed = givenFull !== undefined;
  let done = 0;
  // Native progress can trail the result (or a failure); nothing may be emitted once the job has moved on.
  let closed = false;
  const started = performance.now();
  let result: EngineResult | ScreenResult;
  const hooks = {
    signal,
    ...(givenFull ? { givenFull } : {}),
    onFullToken: (token: number) => {
      if (closed || fullClosed) return;
      const text = deltas.push(token);
      if (text !== "") emitDelta({ text, finishReason: FinishReason.FINISH_REASON_UNSPECIFIED });
    },
    onSequenceDone: () => {
      if (closed) return;
      if (!fullClosed) {
        fullClosed = true;
        emitDelta({ text: deltas.rest(), finishReason: deltas.tokenCount >= maxTokens ? FinishReason.FINISH_REASON_LENGTH : FinishReason.FINISH_REASON_STOP });
      }
      emitCount({ done: ++done, total: setIds.length, finished: [] });
    },
  };
  const windows = { ...(gapTokens !== undefined ? { gapTokens } : {}), ...(tailTokens !== undefined ? { tailTokens } : {}) };
  try {
    result = screen
      ? await ctx.screen({ segments: tokens, maxTokens, ...windows, ...hooks, regenerate: screen.regenerate, ...(screen.threshold !== undefined ? { threshold: screen.threshold } : {}), ...(screen.topK !== undefined ? { topK: screen.topK } : {}) })
      : await ctx.occlude({ segments: tokens, maxTokens, strategy: strategy as OcclusionStrategy, ...windows, ...hooks, ...(scoreAnswer ? { scoreAnswer } : {}) });
  } finally {
    closed = true;
  }
  const wallMs = performance.now() - started;
  // Offsets index the answer as the caller holds it: the given text, or the generated text.
  const scores = screen ? undefined : (result as EngineResult).answerScores;
  const offsets = scores === undefined ? undefined : job.fullAnswerText !== undefined ? tokenOffsetsIn(job.fullAnswerText, model, result.full.tokens) : tokenOffsets(model, result.full.tokens);
  const full = answerToProto(result.full);
  // Progress that trailed the result was dropped above: close A_full and finish the count now, so the
  // stream is whole before the result.
  if (!fullClosed) emitDelta(closingDelta(full, deltas.emitted));
  while (done < setIds.length) emitCount({ done: ++done, total: setIds.length, finished: [] });

  const screening = screen ? (result as ScreenResult) : undefined;
  const screened = screening ? new Set(screening.screened) : undefined;
  const drops = screening?.drops;
  const fullWork = screening?.fullCounters ?? result.counters;
  const initialAnswerMs = fullWork.prefillMs + fullWork.fullMs;
  // A screened answer is a copy of A_full: counting its near-ties again would double them.
  const generated = [result.full, ...result.occluded.filter((_, j) => !screened?.has(j))];
  return {
    jobId: job.jobId,
    requestId: job.requestId,
    workerId,
    model: job.model ?? "",
    fullAnswer: full,
    occluded: result.occluded.map((a, j) => {
      const diverged = divergence(a.tokens, result.full.tokens);
      return {
        setIndex: j,
        setId: setIds[j]!,
        answer: answerToProto(a),
        ...(diverged !== undefined ? { divergedAt: diverged } : {}),
        screened: screened?.has(j) ?? false,
        ...(drops ? { screenDrop: drops[j]! } : {}),
      };
    }),
    counters: { ...occlusionCounters(result.counters, generated, screen ? "screen" : result.strategy), sequences: 1 + result.occluded.length },
    setsUsed: setIds.length,
    setTokens: tokens.blocks.map((b) => b.length),
    sequenceCells: ctx.info.sequenceCells,
    initialAnswerMs,
    occlusionMs: Math.max(0, wallMs - initialAnswerMs),
    ...(scores !== undefined && offsets !== undefined ? { answerScores: answerScoresToProto(offsets, scores) } : {}),
    answerScoresSkipped: scores !== undefined && offsets === undefined ? "sentence attribution: the given A_full's tokens do not detokenize to its text" : skipped,
  };
}
