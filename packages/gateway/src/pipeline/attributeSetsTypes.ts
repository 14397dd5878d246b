// The shapes attributeSets takes and returns, in a leaf of their own so that the attribution methods it
// dispatches to (attributeByCoalitions, likelihoodUtility) can use them without importing attributeSets.
import type { AnswerDelta, AttributionTable, ChunkSet as ProtoChunkSet, EngineCounters, GapFill, OcclusionOutcome, OcclusionProgress, SelectionExplanation } from "@attr-rag/contracts";
import type { ResolvedGeneration, ResolvedSelection } from "./resolveAsk.js";
import type { ResolvedAttribution, ResolvedSentences } from "./resolveAttribution.js";

export interface SetText {
  readonly id: string;
  readonly text: string;
  /** The set's chunks (retrieved sets), for gap fill; caller-supplied sets have none. */
  readonly chunkSet?: ProtoChunkSet;
}

export interface AttributeSetsInput {
  question: string;
  /** Context sets in prompt (re-rank) order. */
  sets: readonly SetText[];
  generation: ResolvedGeneration;
  selection: ResolvedSelection;
  /** Occlusion (the paper) or a coalition method on the log-likelihood utility. */
  attribution: ResolvedAttribution;
  /** Sentence-level attribution of A_full (AttributionTable.sentences). */
  sentences: ResolvedSentences;
  includeOccludedAnswers: boolean;
  /** Use this as A_full instead of generating it. */
  initialAnswer?: string;
  /** Drop the lowest-ranked sets that do not fit the context (with a warning) instead of failing. */
  dropSetsThatDoNotFit: boolean;
  /** The Ask's request id (jobs and selector requests carry it). */
  requestId?: string;
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
  table: AttributionTable;
  selection: SelectionExplanation;
  /** Chunks the selector added between kept chunks. */
  gapFill: GapFill;
  counters: EngineCounters;
  timings: { initialAnswerMs: number; occlusionMs: number; attributionMs: number; selectionMs: number; gapFillMs: number };
  warnings: string[];
}
