// The log-likelihood utility v(C) for many coalitions as one engine job: teacher-forced scoring of the
// target (A_full) given the question and each coalition's sets, batched by the engine with shared prefixes.
import { EngineStrategy, type LikelihoodJob, type LikelihoodResult } from "@attr-rag/contracts";
import type { EngineContext } from "@attr-rag/engine";
import { engineFailure, invalidJob } from "./jobFailure.js";
import { jobPrompt } from "./jobPrompt.js";
import { observedJob } from "./jobTelemetry.js";
import { tokenOffsets, tokenOffsetsIn } from "./answerTokenScores.js";

export function runLikelihoodJob(ctx: EngineContext, job: LikelihoodJob, signal: AbortSignal, workerId = "local"): Promise<LikelihoodResult> {
  return observedJob("likelihood", ctx, job, () => likelihoodJob(ctx, job, signal, workerId));
}

async function likelihoodJob(ctx: EngineContext, job: LikelihoodJob, signal: AbortSignal, workerId: string): Promise<LikelihoodResult> {
  const { tokens } = jobPrompt(ctx.model, job);
  const target = job.target?.content;
  if (target === undefined) throw invalidJob("the job has no target to score");
  if (job.coalitions.length === 0) throw invalidJob("the job has no coalitions to score");
  const continuation = target.$case === "text" ? ctx.model.tokenize(target.value, { addSpecial: false, parseSpecial: false }) : Int32Array.from(target.value.ids);
  const started = performance.now();
  let scored;
  try {
    scored = await ctx.scoreContinuations({ segments: tokens, continuation, coalitions: job.coalitions.map((c) => c.setIndices), signal });
  } catch (err) {
    throw engineFailure(err);
  }
  const c = scored.counters;
  const promptTokens = tokens.prefix.length + tokens.blocks.reduce((n, b) => n + b.length, 0) + tokens.suffix.length;
  return {
    jobId: job.jobId,
    requestId: job.requestId,
    workerId,
    model: job.model ?? "",
    logLikelihoods: scored.totals,
    targetTokens: continuation.length,
    tokenLogProbs: job.perToken ? scored.logProbs.map((v) => ({ logProbs: Array.from(v) })) : [],
    tokenOffsets: !job.perToken ? [] : target.$case === "text" ? (tokenOffsetsIn(target.value, ctx.model, continuation) ?? []) : tokenOffsets(ctx.model, continuation),
    counters: {
      promptTokens,
      tokensEvaluated: c.tokensEvaluated,
      tokensReused: c.tokensReused,
      draftTokensProposed: 0,
      draftTokensAccepted: 0,
      decodeSteps: c.decodeCalls,
      sequences: job.coalitions.length,
      nearTies: 0,
      elapsedMs: performance.now() - started,
      strategy: EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED,
    },
  };
}
