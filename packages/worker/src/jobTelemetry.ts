import type { EngineCounters, JobKind } from "@attr-rag/contracts";
import type { EngineContext } from "@attr-rag/engine";
import { AbortError } from "@attr-rag/engine";
import { counter, histogram, inSpan, recordSpan, SECONDS_BUCKETS, withLogFields } from "@attr-rag/telemetry";
import { modelIdOf } from "./modelId.js";

const jobs = () =>
  counter({
    name: "attr_rag_engine_jobs_total",
    help: "Engine jobs run, by model, kind (occlusion, generation, likelihood, rerank, embed) and outcome (ok, failed, cancelled).",
    labelNames: ["model", "kind", "outcome"],
  });
const jobSeconds = () =>
  histogram({ name: "attr_rag_engine_job_duration_seconds", help: "Time an engine job ran, by model and kind.", labelNames: ["model", "kind"], buckets: SECONDS_BUCKETS });
const promptTokens = () => counter({ name: "attr_rag_engine_prompt_tokens_total", help: "Prompt tokens of the engine jobs run (every sequence's prompt, as the job counts them).", labelNames: ["model"] });
const evaluated = () => counter({ name: "attr_rag_engine_tokens_evaluated_total", help: "Tokens the engine evaluated for its jobs (prompts and generated tokens actually decoded).", labelNames: ["model"] });
const reused = () =>
  counter({
    name: "attr_rag_engine_tokens_reused_total",
    help: "Tokens a job's sequences took from a shared prefix's KV instead of evaluating them; reused ÷ (reused + evaluated) is the prefix-sharing ratio.",
    labelNames: ["model"],
  });
const decodeSteps = () => counter({ name: "attr_rag_engine_generation_steps_total", help: "Greedy generation steps of the engine jobs (decode steps, all sequences of a step counted once).", labelNames: ["model"] });

const modelLabels = new WeakMap<EngineContext, string>();
function modelOf(ctx: EngineContext): string {
  let id = modelLabels.get(ctx);
  if (id === undefined) {
    try {
      id = modelIdOf(ctx.model.info.path);
    } catch {
      id = "unknown";
    }
    modelLabels.set(ctx, id);
  }
  return id;
}

/**
 * Runs one engine job inside a span `engine.<kind>` (its counters as attributes once it ends) and counts it:
 * jobs by outcome, duration, prompt/evaluated/reused tokens. The one place both an embedded gateway and a
 * worker run their jobs through, so both report the same figures.
 */
type JobReport = { counters?: EngineCounters | undefined; initialAnswerMs?: number; occlusionMs?: number };

export function observedJob<R extends object>(
  kind: JobKind,
  ctx: EngineContext,
  job: { jobId: string; requestId?: string },
  run: () => Promise<R>,
): Promise<R> {
  const model = modelOf(ctx);
  const started = performance.now();
  return withLogFields({ job_id: job.jobId, ...(job.requestId ? { request_id: job.requestId } : {}) }, () =>
    inSpan(`engine.${kind}`, { "attr_rag.job.id": job.jobId, "attr_rag.job.kind": kind, "attr_rag.model": model, "attr_rag.request.id": job.requestId ?? "" }, async (span) => {
      let outcome = "failed";
      try {
        const result = await run();
        outcome = "ok";
        const report = result as JobReport;
        const c = report.counters;
        if (c !== undefined) {
          promptTokens().inc({ model }, c.promptTokens);
          evaluated().inc({ model }, c.tokensEvaluated);
          reused().inc({ model }, c.tokensReused);
          decodeSteps().inc({ model }, c.decodeSteps);
          span.setAttributes({
            "attr_rag.engine.prompt_tokens": c.promptTokens,
            "attr_rag.engine.tokens_evaluated": c.tokensEvaluated,
            "attr_rag.engine.tokens_reused": c.tokensReused,
            "attr_rag.engine.decode_steps": c.decodeSteps,
            "attr_rag.engine.sequences": c.sequences,
            "attr_rag.engine.near_ties": c.nearTies,
            "attr_rag.engine.draft_tokens_proposed": c.draftTokensProposed,
            "attr_rag.engine.draft_tokens_accepted": c.draftTokensAccepted,
          });
        }
        if (typeof report.initialAnswerMs === "number" && typeof report.occlusionMs === "number") stageSpans(started, report.initialAnswerMs, report.occlusionMs);
        return result;
      } catch (err) {
        if (err instanceof AbortError) outcome = "cancelled";
        throw err;
      } finally {
        jobs().inc({ model, kind, outcome });
        jobSeconds().observe({ model, kind }, (performance.now() - started) / 1000);
      }
    }),
  );
}

/**
 * An occlusion job runs A_full and the occluded answers inside one native call and reports how long each part
 * took: two child spans of the job's span, laid end to end from the job's start.
 */
function stageSpans(startedMs: number, initialMs: number, occlusionMs: number): void {
  recordSpan("stage.initial_answer", startedMs, startedMs + initialMs);
  recordSpan("stage.occlusion", startedMs + initialMs, startedMs + initialMs + occlusionMs);
}
