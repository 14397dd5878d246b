import { status } from "@grpc/grpc-js";
import {
  AttributionMethod,
  FinishReason,
  SelectionDecision,
  SelectionFlag,
  SelectionReason,
  type AnswerDelta,
  type AttributionTable as ProtoTable,
  type EngineCounters,
  type OcclusionOutcome,
  type OcclusionProgress,
  type SelectionExplanation,
} from "@attr-rag/contracts";
import { attributionScores, selectChunkSets, type SelectionResult } from "@attr-rag/core";
import { TextDeltas, type GeneratedSequence, type OcclusionResult } from "@attr-rag/engine";
import { ServiceError } from "@attr-rag/index";
import type { Runtime } from "../runtime/Runtime.js";
import { answerEmbeddings } from "./answerEmbeddings.js";
import { buildPrompt } from "./buildPrompt.js";
import { closingDelta } from "./closingDelta.js";
import { occlusionCounters } from "./counters.js";
import { occlusionSetsThatFit } from "./fitSetsToContext.js";
import { metricToProto } from "./protoNames.js";
import type { ResolvedGeneration, ResolvedSelection } from "./resolveAsk.js";
import { selectionToProto } from "./selectionToProto.js";

export interface SetText {
  readonly id: string;
  readonly text: string;
}

export interface AttributeSetsInput {
  question: string;
  /** Context sets in prompt (re-rank) order. */
  sets: readonly SetText[];
  generation: ResolvedGeneration;
  selection: ResolvedSelection;
  includeOccludedAnswers: boolean;
  /** Use this as A_full instead of generating it. */
  initialAnswer?: string;
  /** Drop the lowest-ranked sets that do not fit the context (with a warning) instead of failing. */
  dropSetsThatDoNotFit: boolean;
}

export interface AttributeSetsHooks {
  /** A_full as it is generated; the last delta carries the finish reason. */
  onInitialDelta?: (delta: AnswerDelta) => void;
  /** Counts while the engine runs (no outcomes), then one message with every set's outcome. */
  onProgress?: (progress: OcclusionProgress) => void;
}

export interface AttributeSetsResult {
  /** The sets that took part (a prefix of the input when the lowest-ranked ones did not fit the context). */
  sets: readonly SetText[];
  initialAnswer: string;
  outcomes: OcclusionOutcome[];
  table: ProtoTable;
  selection: SelectionExplanation;
  selected: SelectionResult;
  counters: EngineCounters;
  timings: { initialAnswerMs: number; occlusionMs: number; attributionMs: number; selectionMs: number };
  warnings: string[];
}

/**
 * Steps 4-7 of the pipeline on given context sets: A_full, every A_-j (one engine call, so the strategies'
 * prefix sharing applies), α per metric, and the elbow selection with its explanation.
 */
export async function attributeSets(runtime: Runtime, input: AttributeSetsInput, hooks: AttributeSetsHooks, signal: AbortSignal): Promise<AttributeSetsResult> {
  const { model, generator } = runtime;
  const warnings: string[] = [];
  const template = model.chatTemplate();
  let tokens = model.tokenizeSegments(buildPrompt(input.question, input.sets.map((s) => s.text), template));
  const fit = occlusionSetsThatFit(generator, tokens, input.generation.maxTokens, input.generation.strategy);
  let sets = input.sets;
  if (fit < input.sets.length && !input.dropSetsThatDoNotFit) {
    throw new ServiceError(
      status.RESOURCE_EXHAUSTED,
      `only the first ${fit} of ${input.sets.length} sets fit one sequence of the generator context (${runtime.sequenceCells} tokens with the answer); ` +
        "send fewer or shorter sets, fewer max tokens, or raise the server's contextSize",
    );
  }
  if (fit < input.sets.length) {
    warnings.push(
      `context window: kept the ${fit} best re-ranked of ${input.sets.length} sets (one sequence holds ${runtime.sequenceCells} tokens with the answer); ` +
        "raise contextSize or lower sequences to attribute more",
    );
    sets = input.sets.slice(0, fit);
    tokens = { prefix: tokens.prefix, blocks: tokens.blocks.slice(0, fit), suffix: tokens.suffix };
  }

  const givenFull =
    input.initialAnswer === undefined ? undefined : { tokens: model.tokenize(input.initialAnswer, { addSpecial: false, parseSpecial: false }), endedWithEog: true };
  const deltas = new TextDeltas(model);
  const { maxTokens, strategy } = input.generation;
  // A_full's deltas come first, then occlusion progress (the documented event order). Every strategy finishes
  // A_full before it reports the first occluded answer (naive and speculative generate it first, prefix-shared
  // decodes it in the first wave and reports after the wave), so that report closes A_full.
  let fullClosed = givenFull !== undefined;
  const closeFull = (delta: AnswerDelta) => {
    fullClosed = true;
    hooks.onInitialDelta?.(delta);
  };
  let done = 0;
  // Native progress can trail the result (or a failure); nothing may be emitted once the stage has moved on.
  let closed = false;
  const started = performance.now();
  let result: OcclusionResult;
  try {
    result = await generator.occlude({
      segments: tokens,
      maxTokens,
      strategy,
      signal,
      ...(givenFull ? { givenFull } : {}),
      onFullToken: (token) => {
        if (closed || fullClosed) return;
        const text = deltas.push(token);
        if (text !== "") hooks.onInitialDelta?.({ text, finishReason: FinishReason.FINISH_REASON_UNSPECIFIED });
      },
      onSequenceDone: () => {
        if (closed) return;
        if (!fullClosed) {
          const finishReason = deltas.tokenCount >= maxTokens ? FinishReason.FINISH_REASON_LENGTH : FinishReason.FINISH_REASON_STOP;
          closeFull({ text: deltas.rest(), finishReason });
        }
        done++;
        hooks.onProgress?.({ done, total: sets.length, finished: [] });
      },
    });
  } finally {
    closed = true;
  }
  const occlusionWallMs = performance.now() - started;
  if (!fullClosed) closeFull(closingDelta(result.full, deltas.emitted));
  // Reports that trailed the result were dropped above; count them now so `done` never skips.
  // (The count goes outside the optional call: `f?.(++x)` skips the increment when f is unset.)
  while (done < sets.length) {
    done++;
    hooks.onProgress?.({ done, total: sets.length, finished: [] });
  }
  const full = input.initialAnswer ?? result.full.text;
  const occludedTexts = result.occluded.map((a) => a.text);
  const outcomes = result.occluded.map((a, j) => outcome(a, result.full, j, sets[j]!.id, input.includeOccludedAnswers));
  hooks.onProgress?.({ done: sets.length, total: sets.length, finished: outcomes });

  const t0 = performance.now();
  const metrics = input.selection.metrics;
  const embeddings = metrics.includes("cosine") ? await answerEmbeddings(runtime.embedder, full, occludedTexts, signal) : undefined;
  const alphas = attributionScores({ full, occluded: occludedTexts, metrics, ...(embeddings ? { embeddings } : {}) });
  const attributionMs = performance.now() - t0;

  const t1 = performance.now();
  const minVotes = Math.min(input.selection.minVotes, metrics.length);
  if (minVotes < input.selection.minVotes) warnings.push(`min_votes ${input.selection.minVotes} is more than the ${metrics.length} metrics; used ${minVotes}`);
  const selected = selectChunkSets(
    { sets: sets.map((s, i) => ({ id: s.id, tokens: tokens.blocks[i]!.length })), metrics, alphas: alphas.alphas },
    {
      tau: input.selection.tau,
      minVotes,
      epsilon: input.selection.epsilon,
      ...(input.selection.maxSets !== undefined ? { maxSets: input.selection.maxSets } : {}),
      ...(input.selection.tokenBudget !== undefined ? { tokenBudget: input.selection.tokenBudget } : {}),
    },
  );
  const selection = selectionToProto(selected, sets.map((s) => s.id), alphas.alphas, input.selection, minVotes < input.selection.minVotes);
  if (sets.length < input.sets.length) {
    selection.flags.push(SelectionFlag.SELECTION_FLAG_TRUNCATED_BY_CONTEXT_WINDOW);
    input.sets.slice(sets.length).forEach((s, k) =>
      selection.sets.push({
        setIndex: sets.length + k,
        setId: s.id,
        decision: SelectionDecision.SELECTION_DECISION_DROPPED,
        reason: SelectionReason.SELECTION_REASON_CONTEXT_WINDOW,
        reasonText: `dropped before attribution: the prompt with it would not fit one sequence of the generator context (${runtime.sequenceCells} cells)`,
        votes: 0,
        argmaxVotes: 0,
        meanAlpha: 0,
        metricVotes: [],
      }),
    );
  }
  const selectionMs = performance.now() - t1;
  if (selected.contextIgnored) warnings.push("every α was below ε: the answer did not depend on the context; kept the top re-ranked set");

  const table: ProtoTable = {
    method: AttributionMethod.ATTRIBUTION_METHOD_OCCLUSION,
    metrics: metrics.map(metricToProto),
    rows: sets.map((s, j) => ({ setIndex: j, setId: s.id, scores: metrics.map((m) => ({ metric: metricToProto(m), alpha: alphas.alphas[m]![j]! })) })),
    evaluations: sets.length + (input.initialAnswer === undefined ? 1 : 0),
  };
  const initialAnswerMs = result.counters.prefillMs + result.counters.fullMs;
  return {
    sets,
    initialAnswer: full,
    outcomes,
    table,
    selection,
    selected,
    counters: occlusionCounters(result.counters, [result.full, ...result.occluded]),
    timings: { initialAnswerMs, occlusionMs: Math.max(0, occlusionWallMs - initialAnswerMs), attributionMs, selectionMs },
    warnings,
  };
}

function outcome(a: GeneratedSequence, full: GeneratedSequence, j: number, setId: string, withText: boolean): OcclusionOutcome {
  let at = 0;
  while (at < a.tokens.length && at < full.tokens.length && a.tokens[at] === full.tokens[at]) at++;
  const identical = at === a.tokens.length && at === full.tokens.length;
  return { setIndex: j, setId, tokenCount: a.tokens.length, ...(identical ? {} : { divergedAt: at }), ...(withText ? { answerText: a.text } : {}) };
}
