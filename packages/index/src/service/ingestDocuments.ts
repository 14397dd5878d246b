import { status, type handleClientStreamingCall } from "@grpc/grpc-js";
import { IngestStatus, type DocumentIngestResult, type IngestDocumentsRequest, type IngestDocumentsResponse } from "@attr-rag/contracts";
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
    const { status: upserted, chunkCount } = await store.upsertDocument(input, (texts) => embedder.embed(texts, signal));
    const changedChunks = upserted === "indexed" || upserted === "replaced";
    return {
      result: { docId: doc.id, status: STATUS[upserted], chunkCount, message: "" },
      added: changedChunks ? chunkCount : 0,
      removed: upserted === "replaced" ? (before?.chunkCount ?? 0) : 0,
    };
  } catch (err) {
    signal.throwIfAborted();
    const { code, details } = toGrpcStatus(err, "IngestDocuments", ctx.log);
    if (!PER_DOCUMENT.has(code)) throw err;
    // The previous version, if any, is kept: the store writes nothing before a document is fully embedded.
    const outcome = failed(doc.id, details);
    return { ...outcome, result: { ...outcome.result, chunkCount: store.getDocument(doc.id)?.chunkCount ?? 0 } };
  }
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

/** The IngestDocuments handler over this store: each document through ingestOne. */
export function ingestDocumentsHandler(ctx: ServiceContext): handleClientStreamingCall<IngestDocumentsRequest, IngestDocumentsResponse> {
  return ingestStreamHandler(ctx, (request, signal) => ingestOne(ctx, request, signal));
}

/**
 * IngestDocuments (client streaming): documents are ingested one at a time in arrival order by `ingest` (the
 * stream is paused while one is embedded and written, so a fast client cannot pile up memory), and the
 * outcome of each is reported at the end. A bad document fails only itself; a closed store, a cancelled or
 * expired call, or a stream longer than `maxDocumentsPerStream` ends the stream with that status (documents
 * acknowledged by the store before then stay indexed). `ingest` runs here (ingestOne) or on the index over
 * NATS, behind a gateway.
 */
export function ingestStreamHandler(
  ctx: Pick<ServiceContext, "limits" | "log">,
  ingest: (request: IngestDocumentsRequest, signal: AbortSignal) => Promise<Outcome>,
): handleClientStreamingCall<IngestDocumentsRequest, IngestDocumentsResponse> {
  return (call, callback) => {
    const started = performance.now();
    const abort = callSignal(call);
    const outcomes: Outcome[] = [];
    let received = 0;
    let done = false;
    let work: Promise<void> = Promise.resolve();

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

    call.on("data", (request: IngestDocumentsRequest) => {
      if (done) return;
      received++;
      if (received > ctx.limits.maxDocumentsPerStream) {
        const max = ctx.limits.maxDocumentsPerStream;
        finish(new ServiceError(status.RESOURCE_EXHAUSTED, `the stream carried more than ${max} documents, the limit per IngestDocuments call; the first ${max} were processed — send the rest in another stream`));
        return;
      }
      call.pause();
      work = work
        .then(() => ingest(request, abort.signal))
        .then((outcome) => {
          outcomes.push(outcome);
          if (!done) call.resume();
        })
        .catch(finish);
    });
    call.on("end", () => {
      void work.then(() => finish(undefined));
    });
    // A broken stream (grpc-js already chose the status, e.g. an oversized message) ends the call as is.
    call.on("error", (err: Error & { code?: unknown }) => finish(typeof err.code === "number" ? new ServiceError(err.code, err.message) : err));
  };
}
