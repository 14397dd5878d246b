import { DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JsMsg } from "@nats-io/jetstream";
import { status } from "@grpc/grpc-js";
import {
  IndexLogApplied,
  IndexLogEntry,
  IngestStatus,
  INDEX_LOG_STREAM,
  indexAppliedSubject,
  indexLogSubject,
  type DeleteDocumentResponse,
  type Document,
  type DocumentIngestResult,
} from "@attr-rag/contracts";
import type { ShardSpec } from "@attr-rag/core";
import type { NatsConnection } from "@attr-rag/nats";
import { InvalidDocumentError } from "../errors.js";
import { validateDocument } from "../ingest/validateDocument.js";
import type { ServiceContext } from "../service/context.js";
import { deleteDocument } from "../service/deleteDocument.js";
import { ServiceError } from "../service/ServiceError.js";
import { ENTRY_HEADER, ensureIndexLog } from "./indexLog.js";

/** Entries applied together at most (see #run). */
const BATCH = 64;

const STATUSES = { indexed: IngestStatus.INGEST_STATUS_INDEXED, unchanged: IngestStatus.INGEST_STATUS_UNCHANGED, replaced: IngestStatus.INGEST_STATUS_REPLACED, updated: IngestStatus.INGEST_STATUS_REPLACED } as const;

/** After a failure that is not the document's own (embedder down, disk full), the entry is retried after this. */
const RETRY_MS = 1_000;

export interface IndexLogFollowerOptions {
  /** Progress and failures, one line each. */
  readonly log?: (line: string) => void;
}

/** The log no longer holds the entries a store needs next (it was trimmed): a snapshot must fill the gap. */
export class LogTrimmedError extends ServiceError {
  constructor(
    readonly applied: number,
    readonly firstInLog: number,
    message: string,
  ) {
    super(status.FAILED_PRECONDITION, message);
  }
}

/**
 * One replica's side of a replicated index: applies its shard's subject of the ingest log, in order, to its
 * own store (upserts and deletes, idempotent: a document whose text is unchanged is UNCHANGED), records the
 * last sequence applied in the store after each entry, and resumes after it when restarted. Each applied
 * entry is reported to the entry's writer (who may be waiting for N replicas). A failure that is the
 * document's own (it is invalid, too large) is applied as FAILED, as it would be on every replica; any other
 * stops the replica at that entry and retries it, so no replica ever skips one.
 */
export class IndexLogFollower {
  readonly #nc: NatsConnection;
  readonly #ctx: ServiceContext;
  readonly #spec: ShardSpec;
  readonly #log: (line: string) => void;
  readonly #replica: string;
  #messages: ConsumerMessages | undefined;
  #stopped = false;
  #loop: Promise<void> = Promise.resolve();
  #caughtUp: Promise<void>;
  #markCaughtUp: () => void = () => {};
  /** The log's last sequence for this shard when the follower started (0: empty). */
  #target = 0;

  private constructor(nc: NatsConnection, ctx: ServiceContext, spec: ShardSpec, options: IndexLogFollowerOptions) {
    this.#nc = nc;
    this.#ctx = ctx;
    this.#spec = spec;
    this.#log = options.log ?? (() => {});
    this.#replica = ctx.store.replica.id;
    this.#caughtUp = new Promise((resolve) => (this.#markCaughtUp = resolve));
  }

  /**
   * Starts following. Throws LogTrimmedError when the log no longer reaches back to the store's next entry
   * (restore a snapshot first), and StoreConfigMismatchError when the store holds another shard.
   */
  static async start(nc: NatsConnection, ctx: ServiceContext, spec: ShardSpec, options: IndexLogFollowerOptions = {}): Promise<IndexLogFollower> {
    ctx.store.replica.claimShard(spec.shard, spec.shards, ctx.store.path);
    const jsm = await jetstreamManager(nc);
    await ensureIndexLog(jsm);
    const follower = new IndexLogFollower(nc, ctx, spec, options);
    const applied = ctx.store.replica.applied;
    const subject = indexLogSubject(spec.shard, spec.shards);
    const info = await jsm.streams.info(INDEX_LOG_STREAM, { subjects_filter: subject });
    const first = info.state.first_seq;
    // Sequences count within one stream: a store that applied another log's entries (the stream was deleted and
    // made again) would skip this one's first entries as "applied".
    const logId = `${INDEX_LOG_STREAM} created ${info.created}`;
    const heldLog = ctx.store.replica.log;
    if (heldLog === undefined || applied === 0) ctx.store.replica.log = logId;
    else if (heldLog !== logId) {
      throw new LogTrimmedError(
        applied,
        first,
        `the store in ${ctx.store.path} applied entries up to ${applied} of another ingest log (${heldLog}), not of this one (${logId}): the stream was made anew. Serve an empty store (--create in a new directory), which rebuilds from this log, or restore a snapshot taken from this log`,
      );
    }
    const held = info.state.subjects?.[subject] ?? 0;
    // Everything before the stream's first sequence is gone; if entries after the store's last applied one
    // were among them, only a snapshot can fill the gap.
    if (held > 0 && applied + 1 < first) {
      throw new LogTrimmedError(
        applied,
        first,
        `the ingest log starts at sequence ${first}, but the store in ${ctx.store.path} has applied up to ${applied}: the entries between were trimmed from the log. Start this replica from a snapshot of another replica of shard ${spec.shard}/${spec.shards} (\`attr-rag index snapshot --store THEIRS --out NEW\`, then serve NEW); it applies the log after the snapshot's last entry`,
      );
    }
    // The shard's last entry now: caughtUp resolves once it is applied.
    follower.#target = held === 0 ? 0 : await lastOfSubject(jsm, subject);
    if (follower.#target <= applied) follower.#markCaughtUp();
    follower.#loop = follower.#run();
    return follower;
  }

  /** The last log sequence this replica applied. */
  get applied(): number {
    return this.#ctx.store.replica.applied;
  }

  get replicaId(): string {
    return this.#replica;
  }

  /** Resolves once the entries the log held at start are applied. */
  caughtUp(): Promise<void> {
    return this.#caughtUp;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#messages?.close().catch(() => {});
    await this.#loop;
  }

  async #run(): Promise<void> {
    const js = jetstream(this.#nc);
    const subject = indexLogSubject(this.#spec.shard, this.#spec.shards);
    while (!this.#stopped) {
      try {
        // An ordered consumer from the entry after the last applied: in order, no acks, recreated by the client at
        // the right sequence when it sees a gap.
        const consumer = await js.consumers.get(INDEX_LOG_STREAM, { filter_subjects: subject, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.applied + 1 });
        const messages = await consumer.consume({ max_messages: BATCH });
        this.#messages = messages;
        if (this.#stopped) break;
        await this.#drain(messages);
      } catch (err) {
        if (this.#stopped) break;
        this.#log(`ingest log, shard ${this.#spec.shard}/${this.#spec.shards}: stopped at the entry after sequence ${this.applied} (${(err as Error).message}); retrying in ${RETRY_MS / 1000} s`);
        await this.#messages?.close().catch(() => {});
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  /**
   * Receives entries into a queue and applies what has queued up together (one embedding call and one
   * transaction for a run of upserts): a lone write is applied at once, a backlog in batches. Receiving pauses
   * while the queue is full. Returns when the messages end; throws (after closing them) when applying fails.
   */
  async #drain(messages: ConsumerMessages): Promise<void> {
    const queue: JsMsg[] = [];
    let ended = false;
    let wake: (() => void) | undefined;
    let room: (() => void) | undefined;
    const reader = (async () => {
      try {
        for await (const m of messages) {
          queue.push(m);
          wake?.();
          if (queue.length >= 4 * BATCH) await new Promise<void>((resolve) => (room = resolve));
        }
      } finally {
        ended = true;
        wake?.();
      }
    })();
    try {
      while (!this.#stopped) {
        if (queue.length === 0) {
          if (ended) break;
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        await this.#applyBatch(queue.splice(0, BATCH));
        room?.();
        room = undefined;
      }
    } finally {
      await messages.close().catch(() => {});
      room?.();
      await reader.catch(() => {});
    }
  }

  /** Applies entries in log order: consecutive upserts of distinct documents together, deletes one by one. */
  async #applyBatch(messages: readonly JsMsg[]): Promise<void> {
    const store = this.#ctx.store;
    // Read once: the store's meta table, not a field.
    const applied = store.replica.applied;
    const fresh = messages.filter((m) => m.seq > applied).map((m) => ({ m, entry: IndexLogEntry.decode(m.data) }));
    let run: { m: JsMsg; doc: Document | undefined }[] = [];
    const flush = async () => {
      if (run.length === 0) return;
      const results = await this.#upsertRun(run.map((r) => r.doc));
      this.#done(run.map((r, i) => ({ m: r.m, note: { replica: this.#replica, sequence: r.m.seq, ingest: results[i]! } })));
      run = [];
    };
    for (const { m, entry } of fresh) {
      const op = entry.op;
      if (op?.$case === "upsert") {
        if (run.some((r) => r.doc?.id === op.value.document?.id)) await flush();
        run.push({ m, doc: op.value.document });
      } else {
        await flush();
        const note: IndexLogApplied = { replica: this.#replica, sequence: m.seq };
        if (op?.$case === "delete") note.delete = this.#delete(op.value.docId);
        this.#done([{ m, note }]);
      }
    }
    await flush();
  }

  /** Records entries as applied (the last one's sequence), tells their writers, and notes catching up. */
  #done(applied: readonly { m: JsMsg; note: IndexLogApplied }[]): void {
    const last = applied[applied.length - 1]!.m.seq;
    this.#ctx.store.replica.applied = last;
    for (const { m, note } of applied) {
      const id = m.headers?.get(ENTRY_HEADER);
      if (id) this.#nc.publish(indexAppliedSubject(this.#spec.shard, this.#spec.shards, id), IndexLogApplied.encode(note).finish());
    }
    if (last >= this.#target) this.#markCaughtUp();
  }

  /**
   * Upserts documents of distinct ids in one call. A document that is its own fault (missing, invalid, too large)
   * is FAILED on every replica alike and left out; any other failure is thrown, and the run is retried.
   */
  async #upsertRun(docs: readonly (Document | undefined)[]): Promise<DocumentIngestResult[]> {
    const store = this.#ctx.store;
    const results: (DocumentIngestResult | undefined)[] = docs.map((doc) => {
      const docId = doc?.id ?? "";
      const failed = (message: string): DocumentIngestResult => ({ docId, status: IngestStatus.INGEST_STATUS_FAILED, chunkCount: store.getDocument(docId)?.chunkCount ?? 0, message });
      if (doc === undefined) return failed("the log entry carries no document");
      const bytes = Buffer.byteLength(doc.text, "utf8");
      if (bytes > this.#ctx.limits.maxDocumentBytes) return failed(`text is ${bytes} bytes, more than the limit of ${this.#ctx.limits.maxDocumentBytes} bytes per document; split the document`);
      try {
        validateDocument(toInput(doc));
      } catch (err) {
        if (err instanceof InvalidDocumentError) return failed(err.message);
        throw err;
      }
      return undefined;
    });
    const valid = docs.flatMap((doc, i) => (results[i] === undefined ? [doc!] : []));
    const upserted = valid.length === 0 ? [] : await store.upsertDocuments(valid.map(toInput), (texts) => this.#ctx.embedder.embed(texts, undefined, "batch"));
    let next = 0;
    return results.map((r, i) => {
      if (r !== undefined) return r;
      const u = upserted[next++]!;
      return { docId: docs[i]!.id, status: STATUSES[u.status], chunkCount: u.chunkCount, message: "" };
    });
  }

  #delete(docId: string): DeleteDocumentResponse {
    return deleteDocument(this.#ctx, { docId, waitForReplicas: 0 });
  }
}

function toInput(doc: Document) {
  return { id: doc.id, text: doc.text, title: doc.title || undefined, source: doc.source || undefined, license: doc.license || undefined };
}

/** The sequence of the last message on `subject`. */
async function lastOfSubject(jsm: Awaited<ReturnType<typeof jetstreamManager>>, subject: string): Promise<number> {
  try {
    const m = await jsm.streams.getMessage(INDEX_LOG_STREAM, { last_by_subj: subject });
    return m?.seq ?? 0;
  } catch {
    return 0;
  }
}
