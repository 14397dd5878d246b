// NATS names for the distributed mode (ARCHITECTURE.md): engine jobs go through a JetStream work queue,
// the selector and the index are NATS services (name, version, endpoints, queue group; errors as service
// error headers). Every payload is a protobuf message from attr_rag.v1, named in the endpoint metadata.

/** First two tokens of every subject we own; bump with the proto package version. */
export const SUBJECT_PREFIX = "attr_rag.v1";

/** Engine job kinds; each has its own work-queue subject and payload pair. */
export type JobKind = "occlusion" | "generation" | "likelihood";

/**
 * Work-queue subjects, one per job kind: OcclusionJob -> OcclusionResult, GenerationJob -> GenerationResult,
 * LikelihoodJob -> LikelihoodResult. Jobs are published here; results come back on jobResultSubject().
 */
export const JOB_SUBJECTS: Readonly<Record<JobKind, string>> = {
  occlusion: `${SUBJECT_PREFIX}.occlusion.jobs`,
  generation: `${SUBJECT_PREFIX}.generation.jobs`,
  likelihood: `${SUBJECT_PREFIX}.likelihood.jobs`,
};

/** JetStream stream with work-queue retention holding every job until one worker acknowledges it. */
export const JOBS_STREAM = "ATTR_RAG_JOBS";

/** Subjects of JOBS_STREAM: exactly the job subjects (results and progress must stay out of it). */
export const JOBS_STREAM_SUBJECTS: readonly string[] = Object.values(JOB_SUBJECTS);

/** Durable pull consumer all workers share, so each job goes to exactly one worker. */
export const WORKER_CONSUMER = "attr-rag-workers";

/** Whether `token` can be one token of a subject: non-empty, no '.', '*', '>' or whitespace. */
export function isSubjectToken(token: string): boolean {
  return /^[^.*>\s]+$/u.test(token);
}

function jobSubject(jobId: string, leaf: "result" | "progress"): string {
  if (!isSubjectToken(jobId)) {
    throw new RangeError(`job id must be a NATS subject token (no '.', '*', '>' or whitespace): ${JSON.stringify(jobId)}`);
  }
  return `${SUBJECT_PREFIX}.jobs.${jobId}.${leaf}`;
}

/** Core-NATS subject where a worker publishes the one result message of a job. */
export function jobResultSubject(jobId: string): string {
  return jobSubject(jobId, "result");
}

/** Core-NATS subject for a job's best-effort JobProgress messages. */
export function jobProgressSubject(jobId: string): string {
  return jobSubject(jobId, "progress");
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
 * The index over NATS: the same messages as the IndexService gRPC methods. The client-streaming
 * IngestDocuments becomes one request per document, answered by a response with one result.
 */
export const INDEX_NATS_SERVICE: NatsServiceInfo<"ingest" | "search" | "getChunks" | "deleteDocument" | "getStats"> = {
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
  },
};
