import { createHash, randomUUID } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { jetstream, jetstreamManager, type JetStreamClient } from "@nats-io/jetstream";
import {
  IndexLogApplied,
  IndexLogEntry,
  IngestStatus,
  indexAppliedSubject,
  indexLogSubject,
  indexReplaySubject,
  type DeleteDocumentRequest,
  type DeleteDocumentResponse,
  type Document,
  type IngestDocumentsRequest,
  type IngestDocumentsResponse,
  type PreparedChunks,
} from "@attr-rag/contracts";
import { shardOf } from "@attr-rag/core";
import { natsHeaders, type NatsConnection } from "@attr-rag/nats";
import { InvalidDocumentError } from "../errors.js";
import { validateDocument } from "../ingest/validateDocument.js";
import { ServiceError } from "../service/ServiceError.js";
import { ENTRY_HEADER, ensureIndexLog } from "./indexLog.js";

/** Most replicas an ingest may wait for. */
const MAX_WAIT_REPLICAS = 64;
/** Longest idempotency key (it is hashed into the entry id, so any characters do). */
const MAX_KEY_CHARS = 256;

/** Chunks and embeds a document the way its shard's stores do (a replica of the shard: PrepareChunks). */
export type PrepareChunks = (shard: number, document: Document, signal: AbortSignal) => Promise<PreparedChunks>;

export interface IndexLogWriterOptions {
  readonly timeoutMs?: number;
  /**
   * Upserts carry the chunks' vectors, made once here through `prepare` (on the workers when they serve the
   * stores' embedder), so replicas store identical vectors and do not embed. Without it (or when preparing
   * fails, or the entry would be too large for NATS) replicas embed each on their own.
   */
  readonly prepare?: PrepareChunks;
}

/**
 * Writes a replicated index's ingest log: each upsert or delete is appended (JetStream, durable once acked) to
 * the subject of the document's shard, and every replica of that shard applies it in log order. The writer
 * may wait until N replicas report applying it (read-your-writes); they report on a subject only this
 * entry's writer listens to. It remembers, per shard, the last entry it saw applied, so searches through the
 * same index never take an answer from a replica that has not applied it (minApplied).
 */
export class IndexLogWriter {
  readonly #nc: NatsConnection;
  readonly #js: JetStreamClient;
  readonly #shards: number;
  readonly #timeoutMs: number;
  readonly #prepare: PrepareChunks | undefined;
  readonly #seen: number[];

  private constructor(nc: NatsConnection, js: JetStreamClient, shards: number, options: IndexLogWriterOptions) {
    this.#nc = nc;
    this.#js = js;
    this.#shards = shards;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#prepare = options.prepare;
    this.#seen = new Array<number>(shards).fill(0);
  }

  static async open(nc: NatsConnection, shards: number, options: IndexLogWriterOptions = {}): Promise<IndexLogWriter> {
    await ensureIndexLog(await jetstreamManager(nc));
    return new IndexLogWriter(nc, jetstream(nc), shards, options);
  }

  /** The last log sequence of `shard` that this writer saw a replica apply (0: none). */
  minApplied(shard: number): number {
    return this.#seen[shard] ?? 0;
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
    const key = checkKey(request.idempotencyKey);
    const shard = shardOf(docId, this.#shards);
    const prepared = await this.#prepared(shard, doc, signal);
    const upsert = { document: doc, waitForReplicas: 0 };
    const { sequence, applied, duplicate } = await this.#append(docId, "upsert", key, { op: { $case: "upsert", value: upsert }, ...(prepared ? { prepared } : {}) }, wait, signal);
    const again = duplicate ? ` (a retry of idempotency key ${JSON.stringify(key)}: the first write is the one stored)` : "";
    if (wait === 0) return response(IngestStatus.INGEST_STATUS_LOGGED, 0, `in the ingest log at sequence ${sequence}${again}; every replica of shard ${shard} applies it in order`);
    const result = applied[0]!.ingest!;
    return response(result.status, result.chunkCount, result.message);
  }

  /** A delete waits for at least one replica, so the answer says whether the document was there. */
  async delete(request: DeleteDocumentRequest, signal: AbortSignal): Promise<DeleteDocumentResponse> {
    if (request.docId.length === 0) throw new ServiceError(status.INVALID_ARGUMENT, "doc_id is empty");
    const wait = Math.max(1, checkWait(request.waitForReplicas));
    const key = checkKey(request.idempotencyKey);
    const { applied } = await this.#append(request.docId, "delete", key, { op: { $case: "delete", value: { docId: request.docId, waitForReplicas: 0 } } }, wait, signal);
    return applied[0]!.delete ?? { found: false, chunksDeleted: 0 };
  }

  /** The document's vectors from a replica of its shard; undefined (replicas embed) when none can make them. */
  async #prepared(shard: number, doc: Document, signal: AbortSignal): Promise<PreparedChunks | undefined> {
    if (this.#prepare === undefined) return undefined;
    try {
      return await this.#prepare(shard, doc, signal);
    } catch {
      signal.throwIfAborted();
      // No replica of the shard is up to prepare it, or its embedder failed: the entry is still written, and the
      // replicas embed it when they apply it.
      return undefined;
    }
  }

  async #append(docId: string, op: "upsert" | "delete", key: string, entry: IndexLogEntry, wait: number, signal: AbortSignal): Promise<{ sequence: number; applied: IndexLogApplied[]; duplicate: boolean }> {
    const shard = shardOf(docId, this.#shards);
    // With a key, a retry of the same write has the same id, which JetStream stores once (duplicate window).
    const id = key === "" ? randomUUID() : createHash("sha256").update(`${op}\u0000${docId}\u0000${key}`).digest("hex").slice(0, 40);
    let data = IndexLogEntry.encode(entry).finish();
    // Vectors can make an entry larger than the server takes: without them the replicas embed it themselves.
    if (entry.prepared !== undefined && data.length > this.#nc.info!.max_payload - 4_096) data = IndexLogEntry.encode({ ...entry, prepared: undefined }).finish();
    // Listening before the entry exists: a replica may apply it before the publish is even acked.
    const sub = wait > 0 ? this.#nc.subscribe(indexAppliedSubject(shard, this.#shards, id)) : undefined;
    try {
      const h = natsHeaders();
      h.set(ENTRY_HEADER, id);
      let sequence: number;
      let duplicate: boolean;
      try {
        const ack = await this.#js.publish(indexLogSubject(shard, this.#shards), data, { msgID: id, headers: h, timeout: this.#timeoutMs });
        sequence = ack.seq;
        duplicate = ack.duplicate;
      } catch (err) {
        // The client may still send it after reconnecting: what happened is unknown, and only a key makes a retry safe.
        throw new ServiceError(
          status.UNAVAILABLE,
          `the ingest log (JetStream stream on NATS) did not confirm document ${JSON.stringify(docId)} (${(err as Error).message}); it may or may not have been written. ` +
            (key === ""
              ? "Retry with an idempotency_key (the same on every retry) so that a write that did land is not stored twice, possibly after a newer one"
              : `Retry with the same idempotency_key (${JSON.stringify(key)}) within 2 minutes: a write that did land is stored once`),
          { cause: err },
        );
      }
      if (sub === undefined) return { sequence, applied: [], duplicate };
      // A duplicate was applied before this call listened: the replicas that remember it say so again.
      if (duplicate) this.#nc.publish(indexReplaySubject(shard, this.#shards, id));
      const applied = new Map<string, IndexLogApplied>();
      const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.#timeoutMs)]);
      const stop = () => sub.unsubscribe();
      deadline.addEventListener("abort", stop, { once: true });
      try {
        for await (const m of sub) {
          const note = IndexLogApplied.decode(m.data);
          applied.set(note.replica, note);
          this.#seen[shard] = Math.max(this.#seen[shard]!, sequence);
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
      return { sequence, applied: [...applied.values()], duplicate };
    } finally {
      sub?.unsubscribe();
    }
  }
}

function checkWait(n: number): number {
  if (!Number.isInteger(n) || n < 0 || n > MAX_WAIT_REPLICAS) throw new ServiceError(status.INVALID_ARGUMENT, `wait_for_replicas must be from 0 to ${MAX_WAIT_REPLICAS}, got ${n}`);
  return n;
}

function checkKey(key: string | undefined): string {
  const k = key ?? "";
  if (k.length > MAX_KEY_CHARS) throw new ServiceError(status.INVALID_ARGUMENT, `idempotency_key has ${k.length} characters, more than ${MAX_KEY_CHARS}; use a shorter key (a UUID will do)`);
  return k;
}
