import {
  AttributionMethod,
  FinishReason,
  SelectionDecision,
  SelectionFlag,
  SelectionReason,
  type AnswerDelta,
  type AttributionTable,
  type ChunkSet as ProtoChunkSet,
  type EngineCounters,
  type GapFill,
  type OcclusionOutcome,
  type OcclusionProgress,
  type ScreenOptions,
  type SelectionExplanation,
  type SentenceAttributions,
} from "@attr-rag/contracts";
import { settingsToProto } from "@attr-rag/selector";
import { addCounters, closingDelta, strategyToProto } from "@attr-rag/worker";
import type { PipelineRuntime } from "../runtime/pipelineRuntime.js";
import { engineCall, newJobId, onceBySequence } from "./engineCalls.js";
import { inSpan } from "@attr-rag/telemetry";
import { attributeCoalitions } from "@attr-rag/core";
import { attributeByCoalitions, coalitionTable } from "./attributeByCoalitions.js";
import { likelihoodUtility } from "./likelihoodUtility.js";
import { sentencesOf } from "./sentenceAttributions.js";
import type { ResolvedGeneration, ResolvedSelection } from "./resolveAsk.js";
import type { ResolvedAttribution } from "./resolveAttribution.js";
import type { AttributeSetsHooks, AttributeSetsInput, AttributeSetsResult, SetText } from "./attributeSetsTypes.js";

export type { AttributeSetsHooks, AttributeSetsInput, AttributeSetsResult, SetText } from "./attributeSetsTypes.js";

/**
 * Steps 4-7 of the pipeline on given context sets: A_full and every A_-j (one occlusion job, so the
 * strategies' prefix sharing applies), then α per metric, the elbow selection with its explanation and the
 * gap fill of the kept sets (the selector).
 */
export async function attributeSets(runtime: PipelineRuntime, input: AttributeSetsInput, hooks: AttributeSetsHooks, signal: AbortSignal): Promise<AttributeSetsResult> {
  if (input.attribution.method !== "occlusion") return attributeByCoalitions(runtime, input, input.attribution, hooks, signal);
  const requestId = input.requestId ?? "";
  // A_full's deltas come first, then occlusion progress (the job streams them in that order; see
  // runOcclusionJob). Progress is forwarded once per sequence number and never after the result.
  let emittedFull = "";
  let fullClosed = input.initialAnswer !== undefined;
  let done = 0;
  let closed = false;
  const onProgress = onceBySequence((p) => {
    if (closed) return;
    if (p.progress?.$case === "answerDelta") {
      if (fullClosed) return;
      emittedFull += p.progress.value.text;
      if (p.progress.value.finishReason !== FinishReason.FINISH_REASON_UNSPECIFIED) fullClosed = true;
      hooks.onInitialDelta?.(p.progress.value);
    } else if (p.progress?.$case === "occlusion" && p.progress.value.done > done) {
      done = p.progress.value.done;
      hooks.onProgress?.({ done, total: p.progress.value.total, finished: [] });
    }
  });
  let result;
  try {
    result = await inSpan("stage.occlude", {}, () =>
      engineCall(() =>
      runtime.backends.engine.occlude(
        {
          jobId: newJobId("occ"),
          requestId,
          model: runtime.backends.modelId,
          context: { question: input.question, sets: input.sets.map((s) => ({ setId: s.id, segment: { content: { $case: "text", value: s.text } } })) },
          generation: {
            maxTokens: input.generation.maxTokens,
            strategy: strategyToProto(input.generation.strategy),
            ...(input.generation.recomputeGap !== undefined ? { recomputeGap: input.generation.recomputeGap } : {}),
            ...(input.generation.recomputeTail !== undefined ? { recomputeTail: input.generation.recomputeTail } : {}),
            ...(input.generation.screen ? { screen: screenToProto(input.generation.screen) } : {}),
          },
          occludeSetIndices: [],
          deadlineUnixMs: 0,
          streamProgress: true,
          dropSetsThatDoNotFit: input.dropSetsThatDoNotFit,
          ...(input.initialAnswer !== undefined ? { fullAnswerText: input.initialAnswer } : {}),
          scoreAnswerTokens: input.sentences.enabled,
        },
        onProgress,
        signal,
      ),
      ),
    );
  } finally {
    closed = true;
  }
  const fullAnswer = result.fullAnswer!;
  if (!fullClosed) hooks.onInitialDelta?.(closingDelta(fullAnswer, emittedFull));
  const sets = input.sets.slice(0, result.setsUsed);
  // Progress lost on the way (or never sent) is made up, so `done` never skips.
  while (done < sets.length) hooks.onProgress?.({ done: ++done, total: sets.length, finished: [] });
  const warnings: string[] = [];
  if (sets.length < input.sets.length) {
    warnings.push(
      `context window: kept the ${sets.length} best re-ranked of ${input.sets.length} sets (one sequence holds ${result.sequenceCells} tokens with the answer); ` +
        "raise contextSize or lower sequences to attribute more",
    );
  }
  const full = input.initialAnswer ?? fullAnswer.text;
  let sentences: SentenceAttributions | undefined;
  if (input.sentences.enabled) {
    if (result.answerScores !== undefined) sentences = sentencesOf(full, sets.map((s) => s.id), result.answerScores, input.sentences.threshold);
    else warnings.push(`${result.answerScoresSkipped || "sentence attribution: the engine returned no scores"}; attribution.sentences is not set`);
  }
  const outcomes: OcclusionOutcome[] = result.occluded.map((o) => ({
    setIndex: o.setIndex,
    setId: o.setId,
    tokenCount: o.answer!.tokenIds.length,
    ...(o.divergedAt !== undefined ? { divergedAt: o.divergedAt } : {}),
    ...(input.includeOccludedAnswers ? { answerText: o.answer!.text } : {}),
    screened: o.screened,
    ...(o.screenDrop !== undefined ? { screenDrop: o.screenDrop } : {}),
  }));
  hooks.onProgress?.({ done: sets.length, total: sets.length, finished: outcomes });

  // The log-likelihood signal beside the text metrics: leave-one-out on v, n + 1 teacher-forced passes.
  let counters = result.counters!;
  let loglik: AttributionTable | undefined;
  if (input.selection.metrics.includes("loglik")) {
    const target = input.initialAnswer !== undefined ? { content: { $case: "text" as const, value: full } } : { content: { $case: "tokens" as const, value: { ids: fullAnswer.tokenIds } } };
    const scorer = likelihoodUtility(runtime, requestId, input.question, sets, target, signal);
    const loo = await attributeCoalitions(sets.length, scorer.utility, { method: "leave-one-out" });
    counters = addCounters(counters, scorer.counters()!);
    loglik = coalitionTable(AttributionMethod.ATTRIBUTION_METHOD_OCCLUSION, sets, loo);
  }

  const selected = await inSpan("stage.select", {}, () => runtime.backends.selector.select(
    {
      requestId,
      sets: sets.map((s, i) => ({ ...(s.chunkSet ?? emptySet(s.id)), tokenCount: result.setTokens[i]! })),
      fullAnswer: full,
      answers: result.occluded.map((o) => ({
        setIndex: o.setIndex,
        setId: o.setId,
        text: o.answer!.text,
        screened: o.screened,
        ...(o.screenDrop !== undefined ? { screenDrop: o.screenDrop } : {}),
      })),
      ...(loglik ? { attribution: loglik } : {}),
      params: settingsToProto(input.selection),
    },
    signal,
  ));
  warnings.push(...selected.warnings);
  const selection = selected.selection!;
  if (sets.length < input.sets.length) {
    selection.flags.push(SelectionFlag.SELECTION_FLAG_TRUNCATED_BY_CONTEXT_WINDOW);
    input.sets.slice(sets.length).forEach((s, k) =>
      selection.sets.push({
        setIndex: sets.length + k,
        setId: s.id,
        decision: SelectionDecision.SELECTION_DECISION_DROPPED,
        reason: SelectionReason.SELECTION_REASON_CONTEXT_WINDOW,
        reasonText: `dropped before attribution: the prompt with it would not fit one sequence of the generator context (${result.sequenceCells} cells)`,
        votes: 0,
        argmaxVotes: 0,
        meanAlpha: 0,
        metricVotes: [],
      }),
    );
  }
  return {
    sets,
    initialAnswer: full,
    outcomes,
    table: { ...selected.attribution!, evaluations: (loglik?.evaluations ?? 0) + sets.length + (input.initialAnswer === undefined ? 1 : 0), ...(sentences ? { sentences } : {}) },
    selection,
    gapFill: selected.gapFill ?? { gaps: [], addedChunks: [] },
    counters,
    timings: {
      initialAnswerMs: result.initialAnswerMs,
      occlusionMs: result.occlusionMs,
      attributionMs: selected.attributionMs,
      selectionMs: selected.selectionMs,
      gapFillMs: selected.gapFillMs,
    },
    warnings,
  };
}

function screenToProto(s: NonNullable<ResolvedGeneration["screen"]>): ScreenOptions {
  return {
    ...(s.threshold !== undefined ? { threshold: s.threshold } : {}),
    ...(s.topK !== undefined ? { topK: s.topK } : {}),
    regenerate: strategyToProto(s.regenerate),
  };
}

function emptySet(setId: string): ProtoChunkSet {
  return { setId, docId: "", firstOrdinal: 0, lastOrdinal: 0, chunks: [], bestRetrievalRank: 0 };
}
