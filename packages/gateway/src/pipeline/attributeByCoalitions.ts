import { status } from "@grpc/grpc-js";
import { AttributionMetric, type AttributionMethod, type AttributionTable, type PromptSegment } from "@attr-rag/contracts";
import { attributeCoalitions, type CoalitionAttribution, type CoalitionMethod, type CoalitionOptions } from "@attr-rag/core";
import { ServiceError } from "@attr-rag/index";
import { methodToProto, settingsToProto } from "@attr-rag/selector";
import { addCounters } from "@attr-rag/worker";
import type { PipelineRuntime } from "../runtime/pipelineRuntime.js";
import type { AttributeSetsHooks, AttributeSetsInput, AttributeSetsResult, SetText } from "./attributeSetsTypes.js";
import { streamGeneration } from "./generateAnswer.js";
import { likelihoodUtility } from "./likelihoodUtility.js";
import { sentencesByLikelihood } from "./sentenceAttributions.js";
import { checkCoalitionLimits } from "./resolveAttribution.js";

/**
 * Steps 4-7 with a coalition method instead of occlusion: A_full is generated once, then v(C) (the
 * teacher-forced log-likelihood of A_full's tokens given C) is scored for the coalitions the method asks
 * for, in batched likelihood jobs; the method's values are the LOG_LIKELIHOOD column the selector votes on.
 */
export async function attributeByCoalitions(
  runtime: PipelineRuntime,
  input: AttributeSetsInput,
  options: CoalitionOptions & { method: CoalitionMethod },
  hooks: AttributeSetsHooks,
  signal: AbortSignal,
): Promise<AttributeSetsResult> {
  checkCoalitionLimits(options, input.sets.length);
  const requestId = input.requestId ?? "";
  const warnings: string[] = [];
  const t0 = performance.now();
  let sets: readonly SetText[] = input.sets;
  let target: PromptSegment;
  let full: string;
  let counters;
  if (input.initialAnswer !== undefined) {
    full = input.initialAnswer;
    target = { content: { $case: "text", value: full } };
  } else {
    const generated = await streamGeneration(runtime, requestId, input.question, sets.map((s) => s.text), input.generation.maxTokens, (d) => hooks.onInitialDelta?.(d), signal, sets.map((s) => s.id));
    if (generated.setsUsed < sets.length) {
      if (!input.dropSetsThatDoNotFit) {
        throw new ServiceError(status.RESOURCE_EXHAUSTED, `only ${generated.setsUsed} of the ${sets.length} sets fit the generator's context with the answer; give fewer or shorter sets, or raise contextSize`);
      }
      warnings.push(`context window: kept the ${generated.setsUsed} best re-ranked of ${sets.length} sets; raise contextSize or lower sequences to attribute more`);
      sets = sets.slice(0, generated.setsUsed);
    }
    full = generated.answer!.text;
    counters = generated.counters!;
    if (generated.answer!.tokenIds.length === 0) throw new ServiceError(status.FAILED_PRECONDITION, "the model's answer is empty: there is nothing to attribute by likelihood (raise max_tokens or change the question)");
    target = { content: { $case: "tokens", value: { ids: generated.answer!.tokenIds } } };
  }
  const initialAnswerMs = performance.now() - t0;

  const t1 = performance.now();
  const scorer = likelihoodUtility(runtime, requestId, input.question, sets, target, signal);
  const result = await attributeCoalitions(sets.length, scorer.utility, options);
  const occlusionMs = scorer.ms();
  const attributionMs = performance.now() - t1 - occlusionMs;
  const table = coalitionTable(methodToProto(options.method), sets, result);
  // Sentence-level attribution: one more likelihood job (every set, each left out, none), per token.
  let sentences;
  if (input.sentences.enabled) {
    const ids = target.content?.$case === "tokens" ? target.content.value.ids : undefined;
    const scored = await sentencesByLikelihood(runtime, requestId, input.question, sets, { text: full, ...(ids ? { tokenIds: ids } : {}) }, input.sentences.threshold, signal);
    if (scored.sentences === undefined) warnings.push(`${scored.why}; attribution.sentences is not set`);
    sentences = scored.sentences;
    counters = counters === undefined ? scored.counters : scored.counters === undefined ? counters : addCounters(counters, scored.counters);
  }
  if (result.lds !== undefined) warnings.push(`contextcite: the surrogate's LDS on held-out ablations is ${result.lds.toFixed(3)}`);

  const selected = await runtime.backends.selector.select(
    {
      requestId,
      sets: sets.map((s) => s.chunkSet ?? { setId: s.id, docId: "", firstOrdinal: 0, lastOrdinal: 0, chunks: [], bestRetrievalRank: 0 }),
      fullAnswer: full,
      answers: [],
      attribution: table,
      params: settingsToProto(input.selection),
    },
    signal,
  );
  warnings.push(...selected.warnings);
  const likelihood = scorer.counters()!;
  return {
    sets,
    initialAnswer: full,
    outcomes: [],
    table: { ...selected.attribution!, ...(sentences ? { sentences } : {}) },
    selection: selected.selection!,
    gapFill: selected.gapFill ?? { gaps: [], addedChunks: [] },
    counters: counters === undefined ? likelihood : addCounters(counters, likelihood),
    timings: { initialAnswerMs, occlusionMs, attributionMs: attributionMs + selected.attributionMs, selectionMs: selected.selectionMs, gapFillMs: selected.gapFillMs },
    warnings,
  };
}

/** A coalition method's values as the LOG_LIKELIHOOD column of an attribution table, labelled `method`. */
export function coalitionTable(method: AttributionMethod, sets: readonly SetText[], result: CoalitionAttribution): AttributionTable {
  return {
    method,
    metrics: [AttributionMetric.ATTRIBUTION_METRIC_LOG_LIKELIHOOD],
    rows: sets.map((s, j) => ({
      setIndex: j,
      setId: s.id,
      scores: [
        {
          metric: AttributionMetric.ATTRIBUTION_METRIC_LOG_LIKELIHOOD,
          alpha: result.scores[j]!,
          ...(result.stdErrors && Number.isFinite(result.stdErrors[j]) ? { stdError: result.stdErrors[j]! } : {}),
        },
      ],
      ...(result.vWithout ? { loglikWithout: result.vWithout[j]! } : {}),
    })),
    ...(result.vFull !== undefined ? { loglikFull: result.vFull } : {}),
    ...(result.vEmpty !== undefined ? { loglikEmpty: result.vEmpty } : {}),
    evaluations: result.utilityCalls,
  };
}
