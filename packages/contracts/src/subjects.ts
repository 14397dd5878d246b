// NATS names for the distributed mode (ARCHITECTURE.md): engine jobs go through a JetStream work queue,
// the selector and the index are NATS services (name, version, endpoints, queue group; errors as service
// error headers). Every payload is a protobuf message from attr_rag.v1, named in the endpoint metadata.

/** First two tokens of every subject we own; bump with the proto package version. */
export const SUBJECT_PREFIX = "attr_rag.v1";

/** Engine job kinds; each has its own work-queue subject and payload pair. */
export type JobKind = "occlusion" | "generation" | "likelihood" | "rerank" | "embed";
export const JOB_KINDS: readonly JobKind[] = ["occlusion", "generation", "likelihood", "rerank", "embed"];

/** Whether `token` can be one token of a subject: non-empty, no '.', '*', '>' or whitespace. */
export function isSubjectToken(token: string): boolean {
  return /^[^.*>\s]+$/u.test(token);
}

function checkToken(what: string, token: string): string {
  if (!isSubjectToken(token)) {
    throw new RangeError(`${what} must be a NATS subject token (no '.', '*', '>' or whitespace): ${JSON.stringify(token)}`);
  }
  return token;
}

/**
 * Which queue an engine job waits in. Workers pull an interactive job whenever one waits and a batch job only
 * when none does, so an Ask from a person is never stuck behind a pipeline's batch (docs/batches.md, "Every worker busy, interactive Asks first").
 */
export type JobLane = "interactive" | "batch";
export const JOB_LANES: readonly JobLane[] = ["interactive", "batch"];

/**
 * Work-queue subject of a job: `attr_rag.v1.queue.<kind>.<model>` (interactive) or
 * `attr_rag.v1.queue.<kind>.<model>.batch`. OcclusionJob -> OcclusionResult, GenerationJob -> GenerationResult,
 * LikelihoodJob -> LikelihoodResult, RerankJob -> RerankResult (its model token the re-ranker id), EmbedJob ->
 * EmbedResult (its model token embedderToken(the embedder id)); results come back on jobResultSubject(). The model id is part of the
 * subject, so a worker only ever sees jobs for its model.
 */
export function jobSubject(kind: JobKind, model: string, lane: JobLane = "interactive"): string {
  return `${SUBJECT_PREFIX}.queue.${kind}.${checkToken("model id", model)}${lane === "batch" ? ".batch" : ""}`;
}

/** JetStream stream with work-queue retention holding every job until one worker acknowledges it. */
export const JOBS_STREAM = "ATTR_RAG_JOBS";

/** Subjects of JOBS_STREAM: every job subject and nothing else (results and progress must stay out of it). */
export const JOBS_STREAM_SUBJECTS: readonly string[] = [`${SUBJECT_PREFIX}.queue.>`];

/** Durable pull consumer that every worker of one model shares per lane, so each job goes to exactly one of them. */
export function workerConsumer(model: string, lane: JobLane = "interactive"): string {
  return `attr-rag-workers-${checkToken("model id", model)}${lane === "batch" ? "-batch" : ""}`;
}

/** The filter of workerConsumer(model, lane): every kind of job for that model in that lane. */
export function workerFilterSubject(model: string, lane: JobLane = "interactive"): string {
  return `${SUBJECT_PREFIX}.queue.*.${checkToken("model id", model)}${lane === "batch" ? ".batch" : ""}`;
}

/** Stream (limits retention) that keeps dead letters: jobs no worker could run. */
export const DEAD_LETTER_STREAM = "ATTR_RAG_DEAD_LETTERS";

/** Subject of a DeadLetter for a job of `kind`. */
export function deadLetterSubject(kind: JobKind | "unknown"): string {
  return `${SUBJECT_PREFIX}.dead.${kind}`;
}

/** Subjects of DEAD_LETTER_STREAM. */
export const DEAD_LETTER_STREAM_SUBJECTS: readonly string[] = [`${SUBJECT_PREFIX}.dead.>`];

function perJobSubject(jobId: string, leaf: "result" | "progress" | "cancel"): string {
  return `${SUBJECT_PREFIX}.jobs.${checkToken("job id", jobId)}.${leaf}`;
}

/** Core-NATS subject where a worker publishes the one result message of a job. */
export function jobResultSubject(jobId: string): string {
  return perJobSubject(jobId, "result");
}

/** Core-NATS subject for a job's best-effort JobProgress messages. */
export function jobProgressSubject(jobId: string): string {
  return perJobSubject(jobId, "progress");
}

/** Core-NATS subject on which the gateway tells the worker running a job to abandon it (empty payload). */
export function jobCancelSubject(jobId: string): string {
  return perJobSubject(jobId, "cancel");
}

/** One request/reply endpoint of a NATS service. */
export interface NatsEndpoint {
  /** Endpoint name as given to nats.js `addEndpoint` (letters, digits, '-', '_'). */
  readonly name: string;
  /** Full subject the endpoint listens on. */
  readonly subject: string;
  /** Endpoint metadata: fully-qualified protobuf types of the request and response payloads. */
  readonly metadata: Readonly<{ request: string; response: string }>;
}

/** A NATS service as nats.js `services.add()` takes it, plus its endpoints. */
export interface NatsServiceInfo<E extends string> {
  /** Service name (letters, digits, '-', '_'); `$SRV.PING.<name>` finds every instance. */
  readonly name: string;
  /** Semantic version of the service API. */
  readonly version: string;
  /** One-line description shown by `nats micro info`. */
  readonly description: string;
  /** Queue group, so a request reaches one instance. */
  readonly queue: string;
  /** Endpoints by key. */
  readonly endpoints: Readonly<Record<E, NatsEndpoint>>;
}

function endpoint(service: string, name: string, request: string, response: string): NatsEndpoint {
  return {
    name,
    subject: `${SUBJECT_PREFIX}.${service}.${name}`,
    metadata: { request: `attr_rag.v1.${request}`, response: `attr_rag.v1.${response}` },
  };
}

/** The selector: scores occluded answers, votes, selects and fills gaps (SelectionRequest -> SelectionResult). */
export const SELECTOR_NATS_SERVICE: NatsServiceInfo<"select"> = {
  name: "attr-rag-selector",
  version: "1.0.0",
  description: "Attr-RAG selector: attribution metrics, votes, selection and gap fill",
  queue: "attr-rag-selector",
  endpoints: {
    select: endpoint("selector", "select", "SelectionRequest", "SelectionResult"),
  },
};

/**
 * One worker's own service (no queue group: each instance answers for itself), so `$SRV.PING/INFO/STATS
 * .attr-rag-worker` reaches every worker; the stats endpoint answers GetWorkerStatsRequest with WorkerStats.
 */
export function workerNatsService(workerId: string): NatsServiceInfo<"stats"> {
  return {
    name: "attr-rag-worker",
    version: "1.0.0",
    description: "Attr-RAG engine worker: runs occlusion, generation and likelihood jobs from the work queue",
    queue: "",
    endpoints: { stats: endpoint(`worker.${checkToken("worker id", workerId)}`, "stats", "GetWorkerStatsRequest", "WorkerStats") },
  };
}

/**
 * The index over NATS: the same messages as the IndexService gRPC methods. The client-streaming
 * IngestDocuments becomes one request per document, answered by a response with one result.
 */
export const INDEX_NATS_SERVICE: NatsServiceInfo<"ingest" | "search" | "getChunks" | "deleteDocument" | "getStats" | "embedTexts"> = {
  name: "attr-rag-index",
  version: "1.0.0",
  description: "Attr-RAG index: documents, chunks, BM25 and vector search",
  queue: "attr-rag-index",
  endpoints: {
    ingest: endpoint("index", "ingest", "IngestDocumentsRequest", "IngestDocumentsResponse"),
    search: endpoint("index", "search", "SearchRequest", "SearchResponse"),
    getChunks: endpoint("index", "get_chunks", "GetChunksRequest", "GetChunksResponse"),
    deleteDocument: endpoint("index", "delete_document", "DeleteDocumentRequest", "DeleteDocumentResponse"),
    getStats: endpoint("index", "get_stats", "GetStatsRequest", "GetStatsResponse"),
    embedTexts: endpoint("index", "embed_texts", "EmbedTextsRequest", "EmbedTextsResponse"),
  },
};

/** Most shards an index can be split into (a search asks every one). */
export const MAX_INDEX_SHARDS = 64;

/**
 * One shard of a sharded index (`attr-rag index serve --nats --shard i/S`): the index endpoints plus the two a
 * gateway needs to rank across shards (termStats, shardSearch), on subjects that name the shard and the
 * shard count (`attr_rag.v1.index.shard.<S>.<i>.<endpoint>`), so a process started with another count is never
 * asked. The replicas of one shard share its queue group.
 */
export function indexShardNatsService(shard: number, shards: number): NatsServiceInfo<"ingest" | "search" | "getChunks" | "deleteDocument" | "getStats" | "embedTexts" | "termStats" | "shardSearch" | "prepareChunks"> {
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_INDEX_SHARDS) throw new RangeError(`the shard count must be an integer from 1 to ${MAX_INDEX_SHARDS}, got ${shards}`);
  if (!Number.isInteger(shard) || shard < 0 || shard >= shards) throw new RangeError(`the shard must be an integer from 0 to ${shards - 1}, got ${shard}`);
  const service = `index.shard.${shards}.${shard}`;
  return {
    name: "attr-rag-index",
    version: "1.0.0",
    description: `Attr-RAG index, shard ${shard} of ${shards}`,
    queue: `attr-rag-index-${shard}-of-${shards}`,
    endpoints: {
      ingest: endpoint(service, "ingest", "IngestDocumentsRequest", "IngestDocumentsResponse"),
      search: endpoint(service, "search", "SearchRequest", "SearchResponse"),
      getChunks: endpoint(service, "get_chunks", "GetChunksRequest", "GetChunksResponse"),
      deleteDocument: endpoint(service, "delete_document", "DeleteDocumentRequest", "DeleteDocumentResponse"),
      getStats: endpoint(service, "get_stats", "GetStatsRequest", "GetStatsResponse"),
      embedTexts: endpoint(service, "embed_texts", "EmbedTextsRequest", "EmbedTextsResponse"),
      termStats: endpoint(service, "term_stats", "TermStatsRequest", "TermStats"),
      shardSearch: endpoint(service, "shard_search", "ShardSearchRequest", "ShardSearchResponse"),
      prepareChunks: endpoint(service, "prepare_chunks", "PrepareChunksRequest", "PreparedChunks"),
    },
  };
}

/**
 * The ingest log of a replicated index (limits retention: kept until an operator trims it): IndexLogEntry
 * messages, one subject per shard (indexLogSubject); every replica of a shard applies its subject in order.
 */
export const INDEX_LOG_STREAM = "ATTR_RAG_INDEX_LOG";
export const INDEX_LOG_STREAM_SUBJECTS: readonly string[] = [`${SUBJECT_PREFIX}.index.log.>`];
/** Subject of shard `shard` of `shards` in the ingest log. */
export function indexLogSubject(shard: number, shards: number): string {
  indexShardNatsService(shard, shards);
  return `${SUBJECT_PREFIX}.index.log.${shards}.${shard}`;
}
/** Where the replicas of a shard report applying the entry its writer tagged `entryId` (IndexLogApplied). */
export function indexAppliedSubject(shard: number, shards: number, entryId: string): string {
  indexShardNatsService(shard, shards);
  return `${SUBJECT_PREFIX}.index.applied.${shards}.${shard}.${checkToken("log entry id", entryId)}`;
}
/**
 * A writer whose entry was a duplicate (a retry with the same idempotency key) asks here for the notes the
 * shard's replicas already published on indexAppliedSubject; `entryId` "*" is the replicas' subscription.
 */
export function indexReplaySubject(shard: number, shards: number, entryId: string): string {
  indexShardNatsService(shard, shards);
  return `${SUBJECT_PREFIX}.index.applied.${shards}.${shard}.${entryId === "*" ? "*" : checkToken("log entry id", entryId)}.replay`;
}
/**
 * Every replica of a replicated index answers a request here with its IndexReplicaStatus, serving or not (a
 * plain subscription, no queue group): GetCluster gathers them.
 */
export const INDEX_REPLICAS_STATUS_SUBJECT = `${SUBJECT_PREFIX}.index.replicas.status`;
/** Object store bucket of replica snapshots (a store's files and the log sequence they include), per shard. */
export const INDEX_SNAPSHOT_BUCKET = "attr-rag-index-snapshots";

// Batches (distributed mode): items wait in a work queue that every gateway's batch runner pulls from, results
// are kept in a stream (one subject per item, written once), batch records live in a key-value bucket.

/** Whether `id` can name a batch: 1-64 letters, digits, '-' or '_' (it is a subject token and a KV key token). */
export function isBatchId(id: string): boolean {
  return /^[A-Za-z0-9_-]{1,64}$/.test(id);
}

function checkBatchId(id: string): string {
  if (!isBatchId(id)) throw new RangeError(`batch id must be 1-64 letters, digits, '-' or '_': ${JSON.stringify(id)}`);
  return id;
}

/** Work-queue stream of BatchItemJob messages, one per item, until a runner has recorded the item's result. */
export const BATCH_ITEMS_STREAM = "ATTR_RAG_BATCH_ITEMS";
export const BATCH_ITEMS_STREAM_SUBJECTS: readonly string[] = [`${SUBJECT_PREFIX}.batch.items.>`];
/** Subject of a batch's items. */
export function batchItemsSubject(batchId: string): string {
  return `${SUBJECT_PREFIX}.batch.items.${checkBatchId(batchId)}`;
}
/** Durable pull consumer that every gateway's batch runner shares. */
export const BATCH_RUNNERS_CONSUMER = "attr-rag-batch-runners";

/**
 * Work-queue stream that keeps JetStream's "max deliveries" advisories of the runners' consumer, so an item
 * that ran out of deliveries is recorded FAILED even when no gateway was listening at that moment.
 */
export const BATCH_DEAD_ITEMS_STREAM = "ATTR_RAG_BATCH_DEAD_ITEMS";
export const BATCH_DEAD_ITEMS_STREAM_SUBJECTS: readonly string[] = [`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${BATCH_ITEMS_STREAM}.${BATCH_RUNNERS_CONSUMER}`];
/** Durable pull consumer through which every gateway records the dead items' results. */
export const BATCH_DEAD_ITEMS_CONSUMER = "attr-rag-batch-dead-items";

/** Stream (limits retention) of BatchItemResult messages; each item's subject holds at most one. */
export const BATCH_RESULTS_STREAM = "ATTR_RAG_BATCH_RESULTS";
export const BATCH_RESULTS_STREAM_SUBJECTS: readonly string[] = [`${SUBJECT_PREFIX}.batch.results.>`];
/** Subject of one item's result (the item's index, not its id: ids are free text). */
export function batchResultSubject(batchId: string, index: number): string {
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`item index must be an integer ≥ 0, got ${index}`);
  return `${SUBJECT_PREFIX}.batch.results.${checkBatchId(batchId)}.${index}`;
}
/** Every result of one batch. */
export function batchResultsFilter(batchId: string): string {
  return `${SUBJECT_PREFIX}.batch.results.${checkBatchId(batchId)}.*`;
}

/** Core-NATS subject on which CancelBatch tells every gateway to stop the batch's running items (empty payload). */
export function batchCancelSubject(batchId: string): string {
  return `${SUBJECT_PREFIX}.batch.cancel.${checkBatchId(batchId)}`;
}
export const BATCH_CANCEL_SUBJECTS = `${SUBJECT_PREFIX}.batch.cancel.*`;

/**
 * Work-queue stream of batch webhook events (WebhookEventRecord), one per batch end: queued once (the event id
 * is the message id) by whichever gateway sees the batch end first, delivered by one gateway at a time.
 */
export const WEBHOOKS_STREAM = "ATTR_RAG_WEBHOOKS";
export const WEBHOOKS_STREAM_SUBJECTS: readonly string[] = [`${SUBJECT_PREFIX}.webhooks.>`];
/** Subject of a batch's ended event. */
export function webhookEventSubject(batchId: string): string {
  return `${SUBJECT_PREFIX}.webhooks.batch.${checkBatchId(batchId)}`;
}
/** Durable pull consumer that every gateway with a webhook signing secret delivers from. */
export const WEBHOOK_SENDERS_CONSUMER = "attr-rag-webhook-senders";

/**
 * Key-value bucket: `batch.<id>` → BatchRecord, `running.<id>.<runner>` → BatchRunning, `webhook.<id>` (empty)
 * while the batch has a webhook whose event is not queued yet.
 */
export const BATCH_BUCKET = "ATTR_RAG_BATCHES";
