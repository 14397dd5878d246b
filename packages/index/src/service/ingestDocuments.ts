import { status, type handleClientStreamingCall } from "@grpc/grpc-js";
import { IngestStatus, type DocumentIngestResult, type IngestDocumentsRequest, type IngestDocumentsResponse } from "@attr-rag/contracts";
import { EmbeddingError, InvalidDocumentError } from "../errors.js";
import { distinctRuns } from "../ingest/distinctRuns.js";
import type { UpsertStatus } from "../types.js";
import { callSignal } from "./callSignal.js";
import type { ServiceContext } from "./context.js";
import { ServiceError } from "./ServiceError.js";
import { toGrpcStatus } from "./toGrpcStatus.js";

/**
 * `updated` (same text, new title/source/license: the document row was rewritten, its chunks kept) has no
 * value of its own in the proto; it is reported REPLACED (something changed) with no chunks added or removed.
 */
const STATUS: Record<UpsertStatus, IngestStatus> = {
  indexed: IngestStatus.INGEST_STATUS_INDEXED,
  unchanged: IngestStatus.INGEST_STATUS_UNCHANGED,
  replaced: IngestStatus.INGEST_STATUS_REPLACED,
  updated: IngestStatus.INGEST_STATUS_REPLACED,
};

/** Codes for which one document fails and the stream goes on; any other error ends the stream. */
const PER_DOCUMENT = new Set<status>([status.INVALID_ARGUMENT, status.RESOURCE_EXHAUSTED, status.INTERNAL]);

export interface Outcome {
  readonly result: DocumentIngestResult;
  readonly added: number;
  readonly removed: number;
}

function failed(docId: string, message: string): Outcome {
  return { result: { docId, status: IngestStatus.INGEST_STATUS_FAILED, chunkCount: 0, message }, added: 0, removed: 0 };
}

/** Validates, embeds and upserts one document. Throws only for errors that must end the stream. */
export async function ingestOne(ctx: ServiceContext, request: IngestDocumentsRequest, signal: AbortSignal): Promise<Outcome> {
  signal.throwIfAborted();
  const doc = request.document;
  if (doc === undefined) return failed("", "the request carries no document");
  const bytes = Buffer.byteLength(doc.text, "utf8");
  if (bytes > ctx.limits.maxDocumentBytes) {
    return failed(doc.id, `text is ${bytes} bytes, more than the limit of ${ctx.limits.maxDocumentBytes} bytes per document; split the document`);
  }
  const { store, embedder } = ctx;
  const before = doc.id.length > 0 ? store.getDocument(doc.id) : undefined;
  try {
    const input = { id: doc.id, text: doc.text, title: doc.title || undefined, source: doc.source || undefined, license: doc.license || undefined };
    const { status: upserted, chunkCount } = await store.upsertDocument(input, (texts) => embedder.embed(texts, signal, "batch"));
    const changedChunks = upserted === "indexed" || upserted === "replaced";
    return {
      result: { docId: doc.id, status: STATUS[upserted], chunkCount, message: "" },
      added: changedChunks ? chunkCount : 0,
      removed: upserted === "replaced" ? (before?.chunkCount ?? 0) : 0,
    };
  } catch (err) {
    return failedAlone(ctx, doc.id, err, signal);
  }
}

/**
 * A document's failure as its outcome, when the error is one that fails only that document (else it is
 * rethrown and ends the stream). The chunk count is what the store holds now: the previous version, if any,
 * is kept, as the store writes nothing before a document is fully embedded.
 */
function failedAlone(ctx: ServiceContext, docId: string, err: unknown, signal: AbortSignal): Outcome {
  signal.throwIfAborted();
  const { code, details } = toGrpcStatus(err, "IngestDocuments", ctx.log);
  if (!PER_DOCUMENT.has(code)) throw err;
  const outcome = failed(docId, details);
  return { ...outcome, result: { ...outcome.result, chunkCount: ctx.store.getDocument(docId)?.chunkCount ?? 0 } };
}

/** The response for a run of ingested documents (started: performance.now() when the run began). */
export function ingestResponse(outcomes: readonly Outcome[], started: number): IngestDocumentsResponse {
  const count = (s: IngestStatus) => outcomes.filter((o) => o.result.status === s).length;
  return {
    results: outcomes.map((o) => o.result),
    indexed: count(IngestStatus.INGEST_STATUS_INDEXED),
    unchanged: count(IngestStatus.INGEST_STATUS_UNCHANGED),
    replaced: count(IngestStatus.INGEST_STATUS_REPLACED),
    failed: count(IngestStatus.INGEST_STATUS_FAILED),
    chunksAdded: outcomes.reduce((n, o) => n + o.added, 0),
    chunksRemoved: outcomes.reduce((n, o) => n + o.removed, 0),
    elapsedMs: performance.now() - started,
  };
}

/** Documents written together at most: ones that arrived while the previous group was embedded and written. */
const GROUP_DOCUMENTS = 32;
/** Text held waiting (characters) after which the stream is paused until a group is taken from it. */
const GROUP_CHARS = 8 * 1024 * 1024;

/**
 * A group of documents in one store transaction per run of distinct ids (ChunkStore.upsertDocuments), each with
 * its own outcome. A run that fails before writing anything (a bad document, an embedding failure) goes again
 * one document at a time through ingestOne, which says which one failed and why; a failure after its commit
 * (the vectors could not be added) is every document of the run's, as it would be for each alone.
 */
export async function ingestGroup(ctx: ServiceContext, requests: readonly IngestDocumentsRequest[], signal: AbortSignal): Promise<Outcome[]> {
  signal.throwIfAborted();
  const tooBig = (r: IngestDocumentsRequest) => r.document === undefined || Buffer.byteLength(r.document.text, "utf8") > ctx.limits.maxDocumentBytes;
  if (requests.length === 1 || requests.some(tooBig)) return ingestEach(ctx, requests, signal);
  const outcomes: Outcome[] = [];
  for (const run of distinctRuns(requests, (r) => r.document!.id)) outcomes.push(...(await ingestRun(ctx, run, signal)));
  return outcomes;
}

async function ingestRun(ctx: ServiceContext, requests: readonly IngestDocumentsRequest[], signal: AbortSignal): Promise<Outcome[]> {
  const { store, embedder } = ctx;
  const docs = requests.map(({ document: doc }) => ({
    id: doc!.id,
    text: doc!.text,
    title: doc!.title || undefined,
    source: doc!.source || undefined,
    license: doc!.license || undefined,
  }));
  const before = docs.map((d) => (d.id.length > 0 ? store.getDocument(d.id)?.chunkCount : undefined));
  let results;
  try {
    results = await store.upsertDocuments(docs, (texts) => embedder.embed(texts, signal, "batch"));
  } catch (err) {
    signal.throwIfAborted();
    if (err instanceof InvalidDocumentError || err instanceof EmbeddingError) return ingestEach(ctx, requests, signal);
    return docs.map((d) => failedAlone(ctx, d.id, err, signal));
  }
  return results.map(({ status: upserted, chunkCount }, i) => {
    const changedChunks = upserted === "indexed" || upserted === "replaced";
    return {
      result: { docId: docs[i]!.id, status: STATUS[upserted], chunkCount, message: "" },
      added: changedChunks ? chunkCount : 0,
      removed: upserted === "replaced" ? (before[i] ?? 0) : 0,
    };
  });
}

async function ingestEach(ctx: ServiceContext, requests: readonly IngestDocumentsRequest[], signal: AbortSignal): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const request of requests) outcomes.push(await ingestOne(ctx, request, signal));
  return outcomes;
}

/** The IngestDocuments handler over this store: documents in groups through ingestGroup. */
export function ingestDocumentsHandler(ctx: ServiceContext): handleClientStreamingCall<IngestDocumentsRequest, IngestDocumentsResponse> {
  return ingestStreamHandler(ctx, (requests, signal) => ingestGroup(ctx, requests, signal));
}

/**
 * IngestDocuments (client streaming): documents are ingested in arrival order by `ingest`, in groups: the
 * first alone, then each time the documents that arrived meanwhile (up to GROUP_DOCUMENTS), so a fast client
 * gets one store transaction per group, and a slow one no added wait. The stream is paused while a full group
 * waits, so a fast client cannot pile up memory. The outcome of each document is reported at the end. A bad
 * document fails only itself; a closed store, a cancelled or expired call, or a stream longer than
 * `maxDocumentsPerStream` ends the stream with that status (documents acknowledged by the store before then
 * stay indexed; past the limit, the documents up to it are ingested first). `ingest` runs here (ingestGroup)
 * or on the index over NATS, behind a gateway.
 */
export function ingestStreamHandler(
  ctx: Pick<ServiceContext, "limits" | "log">,
  ingest: (requests: readonly IngestDocumentsRequest[], signal: AbortSignal) => Promise<Outcome[]>,
): handleClientStreamingCall<IngestDocumentsRequest, IngestDocumentsResponse> {
  return (call, callback) => {
    const started = performance.now();
    const abort = callSignal(call);
    const outcomes: Outcome[] = [];
    const pending: IngestDocumentsRequest[] = [];
    let pendingChars = 0;
    let received = 0;
    let running = false;
    let ended = false;
    let overflow: ServiceError | undefined;
    let done = false;

    const finish = (err: unknown) => {
      if (done) return;
      done = true;
      abort.dispose();
      abort.signal.removeEventListener("abort", onAbort);
      if (err !== undefined) {
        call.pause();
        callback(toGrpcStatus(err, "IngestDocuments", ctx.log));
        return;
      }
      callback(null, ingestResponse(outcomes, started));
    };
    const onAbort = () => finish(abort.signal.reason);
    abort.signal.addEventListener("abort", onAbort, { once: true });
    if (abort.signal.aborted) onAbort();

    const chars = (r: IngestDocumentsRequest) => r.document?.text.length ?? 0;
    const full = () => pending.length >= GROUP_DOCUMENTS || pendingChars >= GROUP_CHARS;
    const next = () => {
      if (done || running) return;
      if (pending.length === 0) {
        if (overflow) finish(overflow);
        else if (ended) finish(undefined);
        return;
      }
      const group = pending.splice(0, GROUP_DOCUMENTS);
      pendingChars -= group.reduce((n, r) => n + chars(r), 0);
      if (!full() && !overflow) call.resume();
      running = true;
      ingest(group, abort.signal)
        .then((results) => {
          outcomes.push(...results);
          running = false;
          next();
        })
        .catch(finish);
    };

    call.on("data", (request: IngestDocumentsRequest) => {
      if (done || overflow) return;
      received++;
      if (received > ctx.limits.maxDocumentsPerStream) {
        const max = ctx.limits.maxDocumentsPerStream;
        overflow = new ServiceError(status.RESOURCE_EXHAUSTED, `the stream carried more than ${max} documents, the limit per IngestDocuments call; the first ${max} were processed — send the rest in another stream`);
        call.pause();
        next();
        return;
      }
      pending.push(request);
      pendingChars += chars(request);
      if (full()) call.pause();
      next();
    });
    call.on("end", () => {
      ended = true;
      next();
    });
    // A broken stream (grpc-js already chose the status, e.g. an oversized message) ends the call as is.
    call.on("error", (err: Error & { code?: unknown }) => finish(typeof err.code === "number" ? new ServiceError(err.code, err.message) : err));
  };
}
