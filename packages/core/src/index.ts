// Public API of @attr-rag/core: pure Attr-RAG algorithms, no I/O. Siblings import only from here.
export { chunkId, type Chunk } from "./chunking/chunk.js";
export { chunkDocument, DEFAULT_CHUNKER_OPTIONS, type ChunkerOptions } from "./chunking/chunkDocument.js";
export { chunkSetText, type ChunkSet, type RetrievedChunk } from "./alignment/chunkSet.js";
export { alignChunkSets } from "./alignment/alignChunkSets.js";
export {
  selectChunkSets,
  type MetricVerdict,
  type SelectionCandidate,
  type SelectionInput,
  type SelectionReason,
  type SelectionResult,
  type SetDecision,
} from "./selection/selectChunkSets.js";
export { markScreened, zeroScreenedAlphas, type ScreenedSet } from "./selection/markScreened.js";
export { ALPHA_TIE_TOLERANCE, DEFAULT_SELECTION_OPTIONS, type SelectionOptions } from "./selection/selectionOptions.js";
export { DEFAULT_MAX_GAP, fillGaps, type ChunkRef, type ChunkSpan, type GapFillResult } from "./selection/fillGaps.js";
export {
  dedupeRanking,
  meanReciprocalRank,
  ndcgAtK,
  precisionAtK,
  recallAtK,
  reciprocalRank,
  type GainKind,
  type Relevance,
} from "./retrieval/rankingMetrics.js";
export { DEFAULT_RRF_K, reciprocalRankFusion, type FusedHit } from "./retrieval/reciprocalRankFusion.js";
export { convexScoreFusion, type ScoredId } from "./retrieval/convexScoreFusion.js";
export { parseShardSpec, shardOf, type ShardSpec } from "./retrieval/shardOf.js";
export {
  occludeSegments,
  occlusionPrompts,
  renderPrompt,
  sharedPrefixChars,
  type PromptSegments,
} from "./prompt/promptSegments.js";
export {
  buildPromptSegments,
  contextLabel,
  DEFAULT_INSTRUCTION,
  DEFAULT_SYSTEM_PROMPT,
  plainChatTemplate,
  RESERVED_CONTEXT_MARK,
  type ChatMessage,
  type ChatTemplate,
  type PromptParts,
} from "./prompt/buildPromptSegments.js";
export {
  corpusBleu,
  cosineSimilarity,
  jaccardSimilarity,
  porterStem,
  rouge1,
  rouge2,
  rougeL,
  rougeLsum,
  rougeN,
  rougeScores,
  rougeTokenize,
  sentenceBleu,
  tokenize13a,
  type BleuOptions,
  type BleuResult,
  type BleuSmoothMethod,
  type JaccardOptions,
  type NumericVector,
  type RougeOptions,
  type RougeScore,
  type RougeScores,
  type RougeTokenizeOptions,
} from "./metrics/index.js";
export { ATTRIBUTION_METRICS, isAttributionMetric, type AttributionMetric } from "./attribution/attributionMetrics.js";
export { attributionScores, type AttributionInput, type AttributionTable } from "./attribution/attributionScores.js";
export { answerSentences, type SentenceSpan } from "./attribution/answerSentences.js";
export {
  attributeSentences,
  DEFAULT_SENTENCE_THRESHOLD,
  MAX_TOP_SETS,
  tokenSentences,
  type AnswerTokenScores,
  type SentenceAttribution,
} from "./attribution/sentenceAttribution.js";
export { CoalitionGame, coalitionOfMask, popcount, type Coalition, type Utility } from "./coalitions/coalitionGame.js";
export {
  checkCoalitionOptions,
  COALITION_METHODS,
  DEFAULT_BETA,
  DEFAULT_LASSO_RATIO,
  DEFAULT_SAMPLES,
  DEFAULT_TRUNCATION,
  isCoalitionMethod,
  MAX_EXACT_SETS,
  MAX_SAMPLES,
  SAMPLING_METHODS,
  type CoalitionAttribution,
  type CoalitionMethod,
  type CoalitionOptions,
} from "./coalitions/coalitionOptions.js";
export { attributeCoalitions } from "./coalitions/attributeCoalitions.js";
export { exactSemivalue, exactShapley } from "./coalitions/exactSemivalue.js";
export { betaPositionWeights, shapleyPositionWeights } from "./coalitions/semivalueWeights.js";
export { averageRanks, kendallTau, spearman } from "./coalitions/rankCorrelation.js";
export { SeededRandom } from "./coalitions/seededRandom.js";
export * from "./evaluation/index.js";
export {
  batchLifecycle,
  batchThroughput,
  finishedItems,
  RATE_WINDOW_MS,
  windowStart,
  type BatchItemCounts,
  type BatchLifecycle,
  type BatchThroughput,
} from "./batch/batchProgress.js";
export { InputError } from "./input/inputError.js";
export { nonNegativeInt, nonNegativeNumber, oneOf, positiveInt, positiveNumber } from "./input/optionValues.js";
export { parseJsonLines, stringField, type JsonLine } from "./input/jsonLines.js";
export { FAULT_KINDS, faultSchedule, faultsByKind, type Fault, type FaultKind, type FaultScheduleOptions } from "./soak/faultSchedule.js";
export { ASK_STATUSES, checkHistory, rssQuarters, RULES, type Rule, type Violation } from "./soak/checkHistory.js";
export type { BatchObserved, Operation, OperationKind, ReplicaObserved, RssSample, SoakHistory, WebhookDelivery } from "./soak/history.js";
