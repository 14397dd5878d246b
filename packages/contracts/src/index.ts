// Public API of @attr-rag/contracts: the TypeScript generated from protos/attr_rag/v1 (src/gen/, produced
// at build time by scripts/generate.mjs, never edited) plus NATS subject names. Everything is listed by
// name; siblings import from "@attr-rag/contracts" only, never from src/gen.
//
// Each message name is both a TypeScript interface and a value with encode/decode/fromJSON/toJSON/
// create/fromPartial. Each enum comes with <enum>FromJSON/<enum>ToJSON (name <-> number).

// Documents and chunks
export { Document } from "./gen/attr_rag/v1/document.js";
export { Chunk, ChunkRange, ChunkSet, ChunkSetMember, ContextSet } from "./gen/attr_rag/v1/chunk.js";

// Retrieval
export {
  RetrievalFilter,
  RetrievalMode,
  RetrievalOptions,
  ScoredChunk,
  retrievalModeFromJSON,
  retrievalModeToJSON,
} from "./gen/attr_rag/v1/retrieval.js";

// Engine: generation options, prompts, answers, counters
export {
  Answer,
  AnswerDelta,
  EngineCounters,
  EngineStrategy,
  FinishReason,
  GenerationOptions,
  ScreenOptions,
  NearTie,
  OccludedAnswer,
  OcclusionOutcome,
  OcclusionProgress,
  PromptSegment,
  PromptSet,
  QuestionContext,
  SegmentedPrompt,
  TokenIds,
  engineStrategyFromJSON,
  engineStrategyToJSON,
  finishReasonFromJSON,
  finishReasonToJSON,
} from "./gen/attr_rag/v1/engine.js";

// Attribution
export {
  AttributionMethod,
  AttributionMetric,
  AttributionOptions,
  AttributionTable,
  MetricScore,
  SentenceAttribution,
  SentenceAttributions,
  SetAttribution,
  SetChunks,
  attributionMethodFromJSON,
  attributionMethodToJSON,
  attributionMetricFromJSON,
  attributionMetricToJSON,
} from "./gen/attr_rag/v1/attribution.js";

// Selection and gap fill
export {
  FilledGap,
  GapFill,
  MetricCut,
  SelectionDecision,
  SelectionExplanation,
  SelectionFlag,
  SelectionParams,
  SelectionReason,
  SelectionStrategy,
  SetMetricVote,
  SetSelection,
  selectionDecisionFromJSON,
  selectionDecisionToJSON,
  selectionFlagFromJSON,
  selectionFlagToJSON,
  selectionReasonFromJSON,
  selectionReasonToJSON,
  selectionStrategyFromJSON,
  selectionStrategyToJSON,
} from "./gen/attr_rag/v1/selection.js";

// Pipeline events (the Ask stream)
export {
  AskEvent,
  Baseline,
  BaselineOptions,
  ChunkSetsAligned,
  Citation,
  CitationKind,
  Done,
  FinalAnswer,
  RerankedSet,
  Retrieved,
  SetsReranked,
  StageTimings,
  baselineFromJSON,
  baselineToJSON,
  citationKindFromJSON,
  citationKindToJSON,
} from "./gen/attr_rag/v1/pipeline.js";
export type { AskEventCase, AskEventOf, AskEventStage } from "./events.js";

// gRPC: IndexService
export {
  DeleteDocumentRequest,
  DeleteDocumentResponse,
  DocumentIngestResult,
  EmbedTextsRequest,
  EmbedTextsResponse,
  GetChunksRequest,
  GetChunksResponse,
  GetStatsRequest,
  GetStatsResponse,
  IndexServiceClient,
  IndexServiceService,
  IngestDocumentsRequest,
  IngestDocumentsResponse,
  IngestStatus,
  SearchRequest,
  SearchResponse,
  ingestStatusFromJSON,
  ingestStatusToJSON,
} from "./gen/attr_rag/v1/index_service.js";
export type { IndexServiceServer } from "./gen/attr_rag/v1/index_service.js";

// NATS: one shard of a sharded index
export { FusionSettings, IndexLogApplied, IndexLogEntry, IndexReplicaStatus, PrepareChunksRequest, PreparedChunks, ShardSearchRequest, ShardSearchResponse, TermStats, TermStatsRequest } from "./gen/attr_rag/v1/index_shard.js";

// gRPC: AttrRagService
export {
  AskRequest,
  AskResponse,
  AttrRagServiceClient,
  AttrRagServiceService,
  AttributeRequest,
  AttributeResponse,
} from "./gen/attr_rag/v1/attr_rag_service.js";
export type { AttrRagServiceServer } from "./gen/attr_rag/v1/attr_rag_service.js";
export { ATTR_RAG_SERVICE_NAME, BATCH_SERVICE_NAME, CLUSTER_SERVICE_NAME, GRPC_SERVICE_NAMES, INDEX_SERVICE_NAME } from "./grpc.js";

// Batches: BatchService and the messages its items and results travel in (also JetStream payloads)
export {
  Batch,
  BatchCounts,
  BatchItem,
  BatchItemJob,
  BatchItemResult,
  BatchItemState,
  BatchRecord,
  BatchRunning,
  BatchState,
  WebhookDelivery,
  WebhookDeliveryState,
  WebhookEventRecord,
  webhookDeliveryStateFromJSON,
  webhookDeliveryStateToJSON,
  batchItemStateFromJSON,
  batchItemStateToJSON,
  batchStateFromJSON,
  batchStateToJSON,
} from "./gen/attr_rag/v1/batch.js";
export {
  BatchServiceClient,
  BatchServiceService,
  CancelBatchRequest,
  CancelBatchResponse,
  CreateBatchRequest,
  CreateBatchResponse,
  GetBatchRequest,
  GetBatchResponse,
  ListBatchesRequest,
  ListBatchesResponse,
  ListBatchResultsRequest,
  ListBatchResultsResponse,
  WatchBatchRequest,
  WatchBatchResponse,
} from "./gen/attr_rag/v1/batch_service.js";
export type { BatchServiceServer } from "./gen/attr_rag/v1/batch_service.js";
export { ClusterServiceClient, ClusterServiceService, GetClusterRequest, GetClusterResponse, JobQueue } from "./gen/attr_rag/v1/cluster_service.js";
export type { ClusterServiceServer } from "./gen/attr_rag/v1/cluster_service.js";

// NATS payloads: engine jobs (JetStream work queue) and the selector service
export {
  Coalition,
  DeadLetter,
  GenerationJob,
  GenerationResult,
  JobError,
  JobErrorCode,
  JobProgress,
  LikelihoodJob,
  LikelihoodResult,
  RerankJob,
  RerankResult,
  EmbedJob,
  EmbedResult,
  OcclusionJob,
  OcclusionResult,
  AnswerTokenScores,
  TokenLogProbs,
  GetWorkerStatsRequest,
  WorkerStats,
  jobErrorCodeFromJSON,
  jobErrorCodeToJSON,
} from "./gen/attr_rag/v1/worker.js";
export { SelectionRequest, SelectionResult, SetAnswer } from "./gen/attr_rag/v1/selector.js";
export { Embedding } from "./gen/attr_rag/v1/embedding.js";

// NATS subjects, stream, consumer and service names
export {
  BATCH_BUCKET,
  BATCH_CANCEL_SUBJECTS,
  BATCH_ITEMS_STREAM,
  BATCH_ITEMS_STREAM_SUBJECTS,
  BATCH_RESULTS_STREAM,
  BATCH_RESULTS_STREAM_SUBJECTS,
  BATCH_RUNNERS_CONSUMER,
  BATCH_DEAD_ITEMS_STREAM,
  BATCH_DEAD_ITEMS_STREAM_SUBJECTS,
  BATCH_DEAD_ITEMS_CONSUMER,
  WEBHOOKS_STREAM,
  WEBHOOKS_STREAM_SUBJECTS,
  WEBHOOK_SENDERS_CONSUMER,
  webhookEventSubject,
  batchCancelSubject,
  batchItemsSubject,
  batchResultsFilter,
  batchResultSubject,
  isBatchId,
  JOB_LANES,
  DEAD_LETTER_STREAM,
  DEAD_LETTER_STREAM_SUBJECTS,
  INDEX_NATS_SERVICE,
  indexShardNatsService,
  indexAppliedSubject,
  indexReplaySubject,
  indexLogSubject,
  INDEX_LOG_STREAM,
  INDEX_LOG_STREAM_SUBJECTS,
  INDEX_REPLICAS_STATUS_SUBJECT,
  INDEX_SNAPSHOT_BUCKET,
  MAX_INDEX_SHARDS,
  JOB_KINDS,
  JOBS_STREAM,
  JOBS_STREAM_SUBJECTS,
  SELECTOR_NATS_SERVICE,
  SUBJECT_PREFIX,
  deadLetterSubject,
  isSubjectToken,
  jobCancelSubject,
  jobProgressSubject,
  jobResultSubject,
  jobSubject,
  workerConsumer,
  workerFilterSubject,
  workerNatsService,
} from "./subjects.js";
export type { JobKind, JobLane, NatsEndpoint, NatsServiceInfo } from "./subjects.js";
export { embedderToken, ggufEmbedderId } from "./embedderToken.js";

// The codec shape every message value implements (encode/decode/create/fromPartial/JSON), for generic code.
export type { DeepPartial, MessageFns } from "./gen/attr_rag/v1/pipeline.js";

// gRPC server reflection from the compiler's descriptors (buf build, embedded at build time)
export { addServerReflection, reflectionIndex } from "./reflection/serverReflection.js";
export { apiFileDescriptorSet, HEALTH_SERVICE_NAME, healthFileDescriptorSet, splitFileDescriptorSet } from "./reflection/apiDescriptors.js";
export type { DescriptorIndex } from "./reflection/descriptorIndex.js";

// Pure helpers over the generated enums (also bundled into the web console).
export { isApproximateProto } from "./strategies.js";
