import { DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages, type JetStreamManager, type JsMsg } from "@nats-io/jetstream";
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
  type PreparedChunks,
} from "@attr-rag/contracts";
import type { ShardSpec } from "@attr-rag/core";
import type { NatsConnection } from "@attr-rag/nats";
import { DocumentNotFoundError, InvalidDocumentError } from "../errors.js";
import { validateDocument } from "../ingest/validateDocument.js";
import type { ServiceContext } from "../service/context.js";
import type { DocumentInput } from "../types.js";
import { ENTRY_HEADER, ensureIndexLog } from "./indexLog.js";
import { checkLogReaches, UnknownLogEntryError } from "./logReach.js";
import { AppliedNotes } from "./appliedNotes.js";
import type { ReplicaLag } from "./replicaLag.js";

/** Entries applied together at most (see #run). */
const BATCH = 64;

const STATUSES = { indexed: IngestStatus.INGEST_STATUS_INDEXED, unchanged: IngestStatus.INGEST_STATUS_UNCHANGED, replaced: IngestStatus.INGEST_STATUS_REPLACED, updated: IngestStatus.INGEST_STATUS_REPLACED } as const;

/** After a failure that is not the document's own (embedder down, disk full), the entry is retried after this. */
const RETRY_MS = 1_000;

/** How often the log is looked at for how far behind this replica is (see lag()). */
const DEFAULT_LOOK_MS = 1_000;

export interface IndexLogFollowerOptions {
  /** Progress and failures, one line each. */
  readonly log?: (line: string) => void;
  /** How often the follower looks at the log to measure its lag (ms). */
  readonly lookMs?: number;
  /** Called after every look at the log (and when the follower stops at an entry it cannot apply). */
  readonly onLook?: () => void;
}

/** `attr-rag soak --defect …` (a comma-separated list): a fault switched on on purpose, to show the soak's checker finds it. */
const SOAK_SKIPS_ENTRY = (process.env.ATTR_RAG_SOAK_DEFECT ?? "").split(",").includes("replica-skips-entry");

/**
 * One replica's side of a replicated index: applies its shard's subject of the ingest log, in order, to its
 * own store (upserts and deletes, idempotent: a document whose text is unchanged is UNCHANGED), records the
 * last sequence applied in the same transaction as the entry's data, and resumes after it when restarted.
 * Each applied entry is reported to the entry's writer (who may be waiting for N replicas). A failure that is
 * the document's own (it is invalid, too large) is applied as FAILED, as it would be on every replica; any
 * other stops the replica at that entry and retries it, so no replica ever skips one. An entry it cannot read
 * (an operation it does not know) stops it for good, with the reason in `stoppedBecause`.
 */
export class IndexLogFollower {
  readonly #nc: NatsConnection;
  readonly #jsm: JetStreamManager;
  readonly #ctx: ServiceContext;
  readonly #spec: ShardSpec;
  readonly #subject: string;
  readonly #log: (line: string) => void;
  readonly #replica: string;
  readonly #lookMs: number;
  readonly #onLook: () => void;
  readonly notes = new AppliedNotes();
  #messages: ConsumerMessages | undefined;
  #stopped = false;
  #loop: Promise<void> = Promise.resolve();
  #looking: Promise<void> = Promise.resolve();
  #lookTimer: NodeJS.Timeout | undefined;
  #caughtUp: Promise<void>;
  #markCaughtUp: () => void = () => {};
  #failCatchUp: (err: Error) => void = () => {};
  /** The log's last sequence for this shard when the follower started (0: empty). */
  #target = 0;
  #lag: ReplicaLag = { entries: 0, seconds: 0 };
  /** Received from the consumer and not applied yet, by sequence; and what the consumer said was left after the last. */
  readonly #received = new Set<number>();
  #pendingAfter = 0;
  #stoppedBecause: string | undefined;
  #appliedEntries = 0;
  #skippedForSoak: string | undefined;

  private constructor(nc: NatsConnection, jsm: JetStreamManager, ctx: ServiceContext, spec: ShardSpec, options: IndexLogFollowerOptions) {
    this.#nc = nc;
    this.#jsm = jsm;
    this.#ctx = ctx;
    this.#spec = spec;
    this.#subject = indexLogSubject(spec.shard, spec.shards);
    this.#log = options.log ?? (() => {});
    this.#lookMs = options.lookMs ?? DEFAULT_LOOK_MS;
    this.#onLook = options.onLook ?? (() => {});
    this.#replica = ctx.store.replica.id;
    this.#caughtUp = new Promise((resolve, reject) => {
      this.#markCaughtUp = resolve;
      this.#failCatchUp = reject;
    });
    // Nobody may be waiting yet: a rejection seen later by caughtUp()'s caller is not "unhandled".
    this.#caughtUp.catch(() => {});
  }

  /**
   * Starts following. Throws LogTrimmedError when the log no longer reaches back to the store's next entry
   * (restore a snapshot first), StoreConfigMismatchError when the store holds another shard, and whatever
   * JetStream answered when the log cannot be read (a start-up never guesses "nothing to catch up").
   */
  static async start(nc: NatsConnection, ctx: ServiceContext, spec: ShardSpec, options: IndexLogFollowerOptions = {}): Promise<IndexLogFollower> {
    ctx.store.replica.claimShard(spec.shard, spec.shards, ctx.store.path);
    const jsm = await jetstreamManager(nc);
    await ensureIndexLog(jsm);
    const follower = new IndexLogFollower(nc, jsm, ctx, spec, options);
    const applied = ctx.store.replica.applied;
    await checkLogReaches(jsm, ctx.store, spec);
    // The shard's last entry now: caughtUp resolves once it is applied.
    follower.#target = (await jsm.streams.getMessage(INDEX_LOG_STREAM, { last_by_subj: follower.#subject }))?.seq ?? 0;
    if (follower.#target <= applied) follower.#markCaughtUp();
    follower.#loop = follower.#run();
    follower.#scheduleLook(0);
    return follower;
  }

  /** The last log sequence this replica applied. */
  get applied(): number {
    return this.#ctx.store.replica.applied;
  }

  get replicaId(): string {
    return this.#replica;
  }

  get spec(): ShardSpec {
    return this.#spec;
  }

  /** Entries applied since this follower started. */
  get appliedEntries(): number {
    return this.#appliedEntries;
  }

  /** How far behind the log this replica was at its last look. */
  get lag(): ReplicaLag {
    return this.#lag;
  }

  /** Why the follower stopped applying for good (an entry it cannot read); undefined while it applies. */
  get stoppedBecause(): string | undefined {
    return this.#stoppedBecause;
  }

  /** Resolves once the entries the log held at start are applied; rejects if the follower stops before. */
  caughtUp(): Promise<void> {
    return this.#caughtUp;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#lookTimer);
    await this.#messages?.close().catch(() => {});
    await this.#loop;
    await this.#looking;
  }

  #scheduleLook(ms: number): void {
    if (this.#stopped) return;
    this.#lookTimer = setTimeout(() => {
      this.#looking = this.#look()
        .catch((err: unknown) => {
          // A look that fails says nothing new: the last lag stands, and its age grows (see #look).
          if (!this.#stopped) this.#log(`ingest log, shard ${this.#spec.shard}/${this.#spec.shards}: cannot measure the lag (${(err as Error).message})`);
        })
        .finally(() => {
          this.#onLook();
          this.#scheduleLook(this.#lookMs);
        });
    }, ms);
  }

  /**
   * Measures the lag: the oldest entry of the shard after the applied one (its age), and how many entries the
   * consumer has delivered and not applied plus those it says are left. When there is none, every sequence up
   * to the stream's last is known to hold nothing this store lacks (ReplicaState.checked).
   */
  async #look(): Promise<void> {
    const replica = this.#ctx.store.replica;
    const applied = replica.applied;
    const last = (await this.#jsm.streams.info(INDEX_LOG_STREAM)).state.last_seq;
    // Read after `last`: an entry that lands in between is after `last`, so "none up to last" stays true.
    const next = await this.#jsm.streams.getMessage(INDEX_LOG_STREAM, { next_by_subj: this.#subject, seq: applied + 1 } as unknown as { last_by_subj: string });
    if (next === null) {
      this.#lag = { entries: 0, seconds: 0 };
      if (last > Math.max(applied, replica.checked)) replica.checked = last;
      return;
    }
    for (const seq of this.#received) if (seq <= applied) this.#received.delete(seq);
    const entries = Math.max(1, this.#received.size + this.#pendingAfter);
    this.#lag = { entries, seconds: Math.max(0, (Date.now() - next.time.getTime()) / 1000) };
  }

  async #run(): Promise<void> {
    const js = jetstream(this.#nc);
    const subject = this.#subject;
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
        await this.#messages?.close().catch(() => {});
        if (err instanceof UnknownLogEntryError) {
          this.#stoppedBecause = err.message;
          this.#log(`ingest log, shard ${this.#spec.shard}/${this.#spec.shards}: ${err.message}`);
          this.#failCatchUp(err);
          this.#onLook();
          return;
        }
        this.#log(`ingest log, shard ${this.#spec.shard}/${this.#spec.shards}: stopped at the entry after sequence ${this.applied} (${(err as Error).message}); retrying in ${RETRY_MS / 1000} s`);
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
          this.#received.add(m.seq);
          this.#pendingAfter = m.info.pending;
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
    let fresh = messages.filter((m) => m.seq > applied).map((m) => ({ m, entry: readEntry(m) }));
    // A deliberate defect for `attr-rag soak --defect replica-skips-entry`, which must see its checker catch it:
    // the second replica of each shard passes over every log entry of the first soak document it is given.
    if (SOAK_SKIPS_ENTRY && /replica-2\/?$/.test(store.path)) {
      const docOf = (e: (typeof fresh)[number]["entry"]) => (e?.op?.$case === "upsert" ? e.op.value.document?.id : e?.op?.$case === "delete" ? e.op.value.docId : undefined);
      this.#skippedForSoak ??= fresh.map((f) => docOf(f.entry)).find((id) => id?.startsWith("soak-doc-") === true && !id.includes("sentinel"));
      fresh = fresh.filter((f) => docOf(f.entry) === undefined || docOf(f.entry) !== this.#skippedForSoak);
    }
    let run: { m: JsMsg; doc: Document | undefined; prepared: PreparedChunks | undefined; at: string }[] = [];
    const flush = async () => {
      if (run.length === 0) return;
      const results = await this.#upsertRun(run, run[run.length - 1]!.m.seq);
      this.#done(run.map((r, i) => ({ m: r.m, note: { replica: this.#replica, sequence: r.m.seq, ingest: results[i]! } })));
      run = [];
    };
    for (const { m, entry } of fresh) {
      const op = entry?.op;
      if (op?.$case === "upsert") {
        if (run.some((r) => r.doc?.id === op.value.document?.id)) await flush();
        // The entry's time in the log, not the apply's: every replica stores the same document row.
        run.push({ m, doc: op.value.document, prepared: entry?.prepared, at: m.time.toISOString() });
      } else if (op?.$case === "delete") {
        await flush();
        this.#done([{ m, note: { replica: this.#replica, sequence: m.seq, delete: this.#delete(op.value.docId, m.seq) } }]);
      } else {
        await flush();
        throw new UnknownLogEntryError(
          m.seq,
          entry === undefined
            ? `stopped at ingest log entry ${m.seq}: it is not an index log entry (${m.data.length} bytes that do not decode; something else published on ${m.subject}). Nothing after it is applied, and this replica answers no searches; remove the message (\`nats stream rmm ${INDEX_LOG_STREAM} ${m.seq}\`) and restart the replica`
            : `stopped at ingest log entry ${m.seq}: it holds an operation this version of attr-rag does not know (written by a newer one). Nothing after it is applied, and this replica answers no searches; upgrade \`attr-rag index serve\` on this replica, and it goes on from that entry`,
        );
      }
    }
    await flush();
  }

  /** Records entries as applied (the data's own transaction already did, but for FAILED ones), tells their writers, notes catching up. */
  #done(applied: readonly { m: JsMsg; note: IndexLogApplied }[]): void {
    const last = applied[applied.length - 1]!.m.seq;
    const replica = this.#ctx.store.replica;
    if (replica.applied < last) replica.applied = last;
    this.#appliedEntries += applied.length;
    for (const { m, note } of applied) {
      this.#received.delete(m.seq);
      const id = m.headers?.get(ENTRY_HEADER);
      if (id) {
        this.notes.remember(id, note);
        this.#nc.publish(indexAppliedSubject(this.#spec.shard, this.#spec.shards, id), IndexLogApplied.encode(note).finish());
      }
    }
    if (last >= this.#target) this.#markCaughtUp();
  }

  /**
   * Upserts documents of distinct ids in one call, recording `sequence` with them. A document that is its own
   * fault (missing, invalid, too large) is FAILED on every replica alike and left out; any other failure is
   * thrown, and the run is retried.
   */
  async #upsertRun(run: readonly { doc: Document | undefined; prepared: PreparedChunks | undefined; at: string }[], sequence: number): Promise<DocumentIngestResult[]> {
    const store = this.#ctx.store;
    const results: (DocumentIngestResult | undefined)[] = run.map(({ doc }) => {
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
    const valid = run.flatMap((r, i) => (results[i] === undefined ? [{ ...toInput(r.doc!, this.#vectorsFor(r.prepared)), ingestedAt: r.at }] : []));
    const upserted = valid.length === 0 ? [] : await store.upsertDocuments(valid, (texts) => this.#ctx.embedder.embed(texts, undefined, "batch"), { appliedSequence: sequence });
    let next = 0;
    return results.map((r, i) => {
      if (r !== undefined) return r;
      const u = upserted[next++]!;
      return { docId: run[i]!.doc!.id, status: STATUSES[u.status], chunkCount: u.chunkCount, message: "" };
    });
  }

  /** The writer's vectors, when they were made the way this store would make them; else the store embeds. */
  #vectorsFor(prepared: PreparedChunks | undefined): Float32Array[] | undefined {
    const store = this.#ctx.store;
    if (prepared === undefined || prepared.vectors.length === 0) return undefined;
    if (prepared.embedder !== store.embedder.id || prepared.splitter !== store.splitter) return undefined;
    return prepared.vectors.map((v) => Float32Array.from(v.values));
  }

  #delete(docId: string, sequence: number): DeleteDocumentResponse {
    const store = this.#ctx.store;
    // Writers refuse an empty id; one in the log anyway deletes nothing, on every replica alike.
    if (docId.length === 0) return { found: false, chunksDeleted: 0 };
    const existing = store.getDocument(docId);
    try {
      store.deleteDocument(docId, { appliedSequence: sequence });
    } catch (err) {
      if (err instanceof DocumentNotFoundError) return { found: false, chunksDeleted: 0 };
      throw err;
    }
    return { found: true, chunksDeleted: existing?.chunkCount ?? 0 };
  }
}

/** An entry, or undefined for bytes that are none (then it stops the replica, as an unknown operation does). */
function readEntry(m: JsMsg): IndexLogEntry | undefined {
  try {
    return IndexLogEntry.decode(m.data);
  } catch {
    return undefined;
  }
}

function toInput(doc: Document, vectors?: Float32Array[]): DocumentInput {
  return { id: doc.id, text: doc.text, title: doc.title || undefined, source: doc.source || undefined, license: doc.license || undefined, ...(vectors !== undefined ? { vectors } : {}) };
}
