import { randomUUID } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { jetstream, jetstreamManager, type JetStreamClient } from "@nats-io/jetstream";
import {
  IndexLogApplied,
  IndexLogEntry,
  IngestStatus,
  indexAppliedSubject,
  indexLogSubject,
  type DeleteDocumentRequest,
  type DeleteDocumentResponse,
  type IngestDocumentsRequest,
  type IngestDocumentsResponse,
} from "@attr-rag/contracts";
import { shardOf } from "@attr-rag/core";
import { natsHeaders, type NatsConnection } from "@attr-rag/nats";
import { InvalidDocumentError } from "../errors.js";
import { validateDocument } from "../ingest/validateDocument.js";
import { ServiceError } from "../service/ServiceError.js";
import { ENTRY_HEADER, ensureIndexLog } from "./indexLog.js";

/** Most replicas an ingest may wait for. */
const MAX_WAIT_REPLICAS = 64;

/**
 * Writes a replicated index's ingest log: each upsert or delete is appended (JetStream, durable once acked) to
 * the subject of the document's shard, and every replica of that shard applies it in log order. The writer
 * may wait until N replicas report applying it (read-your-writes); they report on a subject only this
 * entry's writer listens to.
 */
export class IndexLogWriter {
  readonly #nc: NatsConnection;
  readonly #js: JetStreamClient;
  readonly #shards: number;
  readonly #timeoutMs: number;

  private constructor(nc: NatsConnection, js: JetStreamClient, shards: number, timeoutMs: number) {
    this.#nc = nc;
    this.#js = js;
    this.#shards = shards;
    this.#timeoutMs = timeoutMs;
  }

  static async open(nc: NatsConnection, shards: number, timeoutMs = 60_000): Promise<IndexLogWriter> {
    await ensureIndexLog(await jetstreamManager(nc));
    return new IndexLogWriter(nc, jetstream(nc), shards, timeoutMs);
  }

  async upsert(request: IngestDocumentsRequest, signal: AbortSignal): Promise<IngestDocumentsResponse> {
    const doc = request.document;
    const docId = doc?.id ?? "";
    const started = performance.now();
    const response = (status: IngestStatus, chunkCount: number, message: string): IngestDocumentsResponse => ({
      results: [{ docId, status, chunkCount, message }],
      indexed: status === IngestStatus.INGEST_STATUS_INDEXED ? 1 : 0,
      unchanged: status === IngestStatus.INGEST_STATUS_UNCHANGED ? 1 : 0,
      replaced: status === IngestStatus.INGEST_STATUS_REPLACED ? 1 : 0,
      failed: status === IngestStatus.INGEST_STATUS_FAILED ? 1 : 0,
      chunksAdded: status === IngestStatus.INGEST_STATUS_INDEXED || status === IngestStatus.INGEST_STATUS_REPLACED ? chunkCount : 0,
      chunksRemoved: 0,
      elapsedMs: performance.now() - started,
    });
    if (doc === undefined) return response(IngestStatus.INGEST_STATUS_FAILED, 0, "the request carries no document");
    try {
      // A document every replica would refuse is refused here, never logged.
      validateDocument({ id: doc.id, text: doc.text });
    } catch (err) {
      if (err instanceof InvalidDocumentError) return response(IngestStatus.INGEST_STATUS_FAILED, 0, err.message);
      throw err;
    }
    const wait = checkWait(request.waitForReplicas);
    const { sequence, applied } = await this.#append(docId, { op: { $case: "upsert", value: { document: doc, waitForReplicas: 0 } } }, wait, signal);
    if (wait === 0) return response(IngestStatus.INGEST_STATUS_LOGGED, 0, `in the ingest log at sequence ${sequence}; every replica of shard ${shardOf(docId, this.#shards)} applies it in order`);
    const result = applied[0]!.ingest!;
    return response(result.status, result.chunkCount, result.message);
  }

  /** A delete waits for at least one replica, so the answer says whether the document was there. */
  async delete(request: DeleteDocumentRequest, signal: AbortSignal): Promise<DeleteDocumentResponse> {
    if (request.docId.length === 0) throw new ServiceError(status.INVALID_ARGUMENT, "doc_id is empty");
    const { applied } = await this.#append(request.docId, { op: { $case: "delete", value: { docId: request.docId, waitForReplicas: 0 } } }, Math.max(1, checkWait(request.waitForReplicas)), signal);
    return applied[0]!.delete ?? { found: false, chunksDeleted: 0 };
  }

  async #append(docId: string, entry: IndexLogEntry, wait: number, signal: AbortSignal): Promise<{ sequence: number; applied: IndexLogApplied[] }> {
    const shard = shardOf(docId, this.#shards);
    const id = randomUUID();
    // Listening before the entry exists: a replica may apply it before the publish is even acked.
    const sub = wait > 0 ? this.#nc.subscribe(indexAppliedSubject(shard, this.#shards, id)) : undefined;
    try {
      const h = natsHeaders();
      h.set(ENTRY_HEADER, id);
      let sequence: number;
      try {
        const ack = await this.#js.publish(indexLogSubject(shard, this.#shards), IndexLogEntry.encode(entry).finish(), { msgID: id, headers: h, timeout: this.#timeoutMs });
        sequence = ack.seq;
      } catch (err) {
        throw new ServiceError(status.UNAVAILABLE, `the ingest log (JetStream stream on NATS) did not take document ${JSON.stringify(docId)}: ${(err as Error).message}; nothing was written, retry`, { cause: err });
      }
      if (sub === undefined) return { sequence, applied: [] };
      const applied = new Map<string, IndexLogApplied>();
      const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.#timeoutMs)]);
      const stop = () => sub.unsubscribe();
      deadline.addEventListener("abort", stop, { once: true });
      try {
        for await (const m of sub) {
          const note = IndexLogApplied.decode(m.data);
          applied.set(note.replica, note);
          if (applied.size >= wait) break;
        }
      } finally {
        deadline.removeEventListener("abort", stop);
      }
      if (applied.size < wait) {
        signal.throwIfAborted();
        throw new ServiceError(
          status.DEADLINE_EXCEEDED,
          `document ${JSON.stringify(docId)} is in the ingest log (sequence ${sequence}, durable), but ${applied.size} of the ${wait} replicas of shard ${shard} waited for applied it within ${this.#timeoutMs / 1000} s; the others apply it when they run (start more with \`attr-rag index serve --nats URL --shard ${shard}/${this.#shards}\`), or wait for fewer`,
        );
      }
      return { sequence, applied: [...applied.values()] };
    } finally {
      sub?.unsubscribe();
    }
  }
}

function checkWait(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > MAX_WAIT_REPLICAS) throw new ServiceError(status.INVALID_ARGUMENT, `wait_for_replicas must be from 0 to ${MAX_WAIT_REPLICAS}, got ${n}`);
  return n;
}
