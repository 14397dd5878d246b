import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { DeliverPolicy, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import {
  BATCH_ITEMS_STREAM,
  BATCH_RESULTS_STREAM,
  BATCH_RUNNERS_CONSUMER,
  BatchItemJob,
  BatchItemResult,
  batchCancelSubject,
  batchItemsSubject,
  batchResultsFilter,
  type Batch,
  type BatchRecord,
} from "@attr-rag/contracts";
import { batchLifecycle, batchThroughput, windowStart } from "@attr-rag/core";
import { ServiceError, type ServiceLog } from "@attr-rag/index";
import type { ConnectionWatch, NatsConnection } from "@attr-rag/nats";
import type { BatchStore, NewBatch } from "../batchStore.js";
import { ChangeSignal } from "../changeSignal.js";
import { decodePageToken, encodePageToken, isAfter, newestFirst } from "../pageToken.js";
import { hasEnded, toBatch } from "../toBatch.js";
import { BatchRecords } from "./batchRecords.js";
import { DEFAULT_BATCH_QUEUE, ensureBatchStreams, type BatchQueueSettings } from "./batchStreams.js";
import { ItemDeadLetters } from "./itemDeadLetters.js";
import { cancelledResult, CANCELLED_BEFORE_START } from "../itemResult.js";
import { JetStreamBatchQueue, publishResult } from "./JetStreamBatchQueue.js";
import { releaseConsumer, ResultsView } from "./ResultsView.js";
import { RunningMarkers } from "./runningMarkers.js";
import { batchConflict } from "../batchConflict.js";
import { batchEndedBody, batchEndedEventId, batchEndedType } from "../webhooks/batchEndedEvent.js";
import { publishWebhookEvent, WebhookQueue } from "./webhookQueue.js";
import { webhookDelivery } from "../webhooks/webhookDelivery.js";
import type { WebhookOutcome } from "../webhooks/attemptWebhook.js";

/** Items published at once while queueing a batch (each publish waits for its JetStream acknowledgement). */
const PUBLISH_WINDOW = 256;
/** Stretches of the items queue read at once when a cancel records the queued items' results. */
const CANCEL_WALKERS = 8;

/**
 * Batches in JetStream, shared by every gateway: records in the ATTR_RAG_BATCHES bucket, items in the
 * ATTR_RAG_BATCH_ITEMS work queue, results in ATTR_RAG_BATCH_RESULTS. A gateway holds nothing a restart
 * could lose: counts and offsets are read back from the results stream (ResultsView is a cache of it).
 */
export class JetStreamBatchStore implements BatchStore {
  readonly #changes = new ChangeSignal();
  readonly #records: BatchRecords;
  readonly #view: ResultsView;
  readonly #markers: RunningMarkers;
  readonly #deadLetters: ItemDeadLetters;
  readonly queue: JetStreamBatchQueue;
  /** Webhook events waiting to be delivered, for the gateways that deliver them (JetStreamWebhookSender). */
  readonly webhooks: WebhookQueue;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly watch: ConnectionWatch,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    kv: KV,
    queue: (records: BatchRecords, markers: RunningMarkers) => JetStreamBatchQueue,
    private readonly log: ServiceLog,
  ) {
    this.#records = new BatchRecords(kv);
    this.#view = new ResultsView(js, jsm, this.#changes);
    this.#markers = new RunningMarkers(kv, `${hostname().replace(/[^A-Za-z0-9_-]/g, "_")}-${process.pid}-${randomBytes(3).toString("hex")}`, log);
    this.queue = queue(this.#records, this.#markers);
    this.#deadLetters = new ItemDeadLetters(js, jsm, log);
    this.webhooks = new WebhookQueue(js, log);
  }

  static async open(nc: NatsConnection, watch: ConnectionWatch, o: { log: ServiceLog; settings?: BatchQueueSettings }): Promise<JetStreamBatchStore> {
    const settings = o.settings ?? DEFAULT_BATCH_QUEUE;
    const jsm = await jetstreamManager(nc);
    const kv = await ensureBatchStreams(nc, jsm, settings);
    const js = jetstream(nc);
    const consumer = await js.consumers.get(BATCH_ITEMS_STREAM, BATCH_RUNNERS_CONSUMER);
    return new JetStreamBatchStore(nc, watch, js, jsm, kv, (records, markers) => new JetStreamBatchQueue(nc, js, jsm, consumer, records, markers, settings, o.log), o.log);
  }

  async create(batch: NewBatch): Promise<{ batch: Batch; created: boolean }> {
    return this.#reachable(async () => {
      // Where this batch's items and results start in their streams (see BatchRecord.results_from_seq).
      const [items, results] = await Promise.all([this.jsm.streams.info(BATCH_ITEMS_STREAM), this.jsm.streams.info(BATCH_RESULTS_STREAM)]);
      const { record, created } = await this.#records.create({
        batchId: batch.batchId,
        totalItems: batch.items.length,
        createdUnixMs: batch.createdUnixMs,
        label: batch.label,
        itemsSha256: batch.itemsSha256,
        cancelled: false,
        published: false,
        itemsFromSeq: items.state.last_seq + 1,
        resultsFromSeq: results.state.last_seq + 1,
        traceparent: batch.traceparent ?? "",
        webhookUrl: batch.webhookUrl ?? "",
        webhookQueued: false,
        webhookAttempts: 0,
        webhookLastError: "",
        webhookDeliveredUnixMs: 0,
        webhookGaveUpUnixMs: 0,
      });
      const conflict = batchConflict(record, batch);
      if (conflict !== undefined) throw conflict;
      // A record left unpublished by a gateway that died while queueing: this same CreateBatch finishes it.
      if (!record.published) {
        // An earlier batch under this id whose record expired may have left results; none of them is this batch's.
        // Only sequences below the record's are purged, so a re-sent CreateBatch cannot touch a result of this batch.
        if (record.resultsFromSeq > 0) await this.jsm.streams.purge(BATCH_RESULTS_STREAM, { filter: batchResultsFilter(batch.batchId), seq: record.resultsFromSeq });
        // Marked before any item is queued, so the batch cannot end unmarked (queueEndedWebhooks finds it).
        if (record.webhookUrl !== "") await this.#records.webhookPending(batch.batchId);
        await this.#publishItems(batch);
        await this.#records.update(batch.batchId, (r) => ({ ...r, published: true }));
      }
      this.#changes.notify(batch.batchId);
      return { batch: await this.get(batch.batchId), created };
    });
  }

  async get(batchId: string): Promise<Batch> {
    return this.#reachable(async () => this.#batchOf(await this.#record(batchId)));
  }

  async #record(batchId: string): Promise<BatchRecord> {
    const record = await this.#records.get(batchId, { fresh: true });
    if (record === undefined) throw new ServiceError(status.NOT_FOUND, `no batch ${batchId}; list them with ListBatches (attr-rag batch list)`);
    return record;
  }

  async list(pageSize: number, pageToken: string): Promise<{ batches: Batch[]; nextPageToken: string }> {
    return this.#reachable(async () => {
      const after = pageToken === "" ? undefined : decodePageToken(pageToken);
      // Ordered from the bucket's keys alone; only the page's records are read, and its batches' results are
      // counted by consumers deleted as soon as they have counted.
      const ordered = (await this.#records.created())
        .sort(newestFirst)
        .filter((p) => after === undefined || isAfter(p, after));
      const page: { createdMs: number; id: string }[] = [];
      const records: BatchRecord[] = [];
      for (const p of ordered) {
        if (records.length === pageSize) break;
        const r = await this.#records.get(p.id);
        if (r === undefined) continue; // expired between the listing and now
        page.push(p);
        records.push(r);
      }
      const batches = await Promise.all(records.map((r) => this.#batchOf(r, { keep: false })));
      const more = ordered.length > 0 && page.length === pageSize && ordered.at(-1) !== page.at(-1);
      return { batches, nextPageToken: more ? encodePageToken(page.at(-1)!) : "" };
    });
  }

  async cancel(batchId: string): Promise<Batch> {
    return this.#reachable(async () => {
      const record = await this.#record(batchId);
      const before = await this.#batchOf(record);
      if (!hasEnded(before.state)) {
        await this.#records.update(batchId, (r) => ({ ...r, cancelled: true }));
        // Every gateway stops its running items of the batch; queued ones end CANCELLED here and now.
        this.nc.publish(batchCancelSubject(batchId));
        await this.nc.flush();
        await this.#cancelQueued(batchId, record.itemsFromSeq);
        this.#changes.notify(batchId);
      }
      return this.get(batchId);
    });
  }

  /**
   * Records CANCELLED for each item of the batch still in the work queue and not running, instead of leaving
   * that to the runners: they reach a batch's items only after every earlier batch's (hours behind a large
   * one), and `batch watch` would wait that long. Each result is published "only if the item has none", so a
   * runner finishing an item meanwhile keeps its own; runners acknowledge the messages without running them.
   */
  async #cancelQueued(batchId: string, itemsFromSeq: number): Promise<void> {
    const running = await RunningMarkers.read(this.#records.kv, batchId);
    const { first_seq: oldest, last_seq: last } = (await this.jsm.streams.info(BATCH_ITEMS_STREAM)).state;
    const first = Math.max(oldest, itemsFromSeq);
    if (last < first) return;
    // The queue is walked in CANCEL_WALKERS stretches at once: one message per round trip, each stretch on its own.
    const span = Math.ceil((last - first + 1) / CANCEL_WALKERS);
    const stretches = Array.from({ length: CANCEL_WALKERS }, (_, i) => [first + i * span, Math.min(last, first + (i + 1) * span - 1)] as const).filter(([a, b]) => a <= b);
    await Promise.all(stretches.map(([from, to]) => this.#cancelStretch(batchId, from, to, running)));
  }

  async #cancelStretch(batchId: string, from: number, to: number, running: ReadonlySet<number>): Promise<void> {
    const pending: Promise<boolean>[] = [];
    for (let seq = from; seq <= to; ) {
      // STREAM.MSG.GET with next_by_subj: the batch's next item message at or after seq (nats-server >= 2.9).
      const m = await this.jsm.streams.getMessage(BATCH_ITEMS_STREAM, { seq, next_by_subj: batchItemsSubject(batchId) } as never).catch((err: unknown) => {
        if (/no message found/i.test((err as Error).message)) return null;
        throw err;
      });
      if (m === null || m.seq > to) break;
      seq = m.seq + 1;
      let job: BatchItemJob;
      try {
        job = BatchItemJob.decode(m.data);
      } catch {
        continue; // the runners drop it, saying so
      }
      if (running.has(job.index)) continue;
      const question = job.item?.request?.question ?? "";
      pending.push(publishResult(this.js, cancelledResult({ batchId, itemId: job.item?.itemId ?? "", index: job.index, question }, CANCELLED_BEFORE_START), m.seq));
      if (pending.length >= PUBLISH_WINDOW) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);
  }

  async *results(batchId: string, offset: number, follow: boolean, signal: AbortSignal): AsyncIterable<BatchItemResult> {
    let next = offset;
    for (;;) {
      signal.throwIfAborted();
      const record = await this.#reachable(() => this.#record(batchId));
      const batch = await this.#reachable(() => this.#batchOf(record));
      const view = await this.#view.of(batchId, record.resultsFromSeq);
      if (next < view.total) {
        for await (const result of this.#read(batchId, view.seqs[next]!, view.total - next, signal)) yield { ...result, offset: next++ };
        continue;
      }
      if (!follow || hasEnded(batch.state)) return;
      await this.#changes.wait(batchId, 1_000, signal);
    }
  }

  /**
   * Queues the ended event of each batch with a webhook that has ended since the last look, and returns the
   * ids of those this call queued (not another gateway at the same moment). Every gateway that delivers
   * webhooks calls it every second: whichever sees the end first queues the event, a second one is dropped by
   * its id, and a gateway killed right after the batch ended leaves the mark for the others (or for itself
   * after a restart).
   */
  async queueEndedWebhooks(): Promise<string[]> {
    const queued: string[] = [];
    for (const id of await this.#records.pendingWebhooks()) {
      const record = await this.#records.get(id, { fresh: true });
      if (record === undefined || record.webhookUrl === "" || record.webhookQueued) {
        await this.#records.webhookDone(id); // expired, or queued by a gateway that died before clearing the mark
        continue;
      }
      // A batch has ended once every item has its result (also a cancelled one); only the cached view is read.
      const view = await this.#view.of(id, record.resultsFromSeq);
      if (view.total < record.totalItems) continue;
      const counts = { ...view.counts, queued: 0, running: 0 };
      // The time the last result was recorded: the same whichever gateway queues the event.
      const endedMs = view.finishedMs.reduce((a, b) => Math.max(a, b), 0);
      const body = batchEndedBody(id, batchEndedType(record.cancelled, counts), endedMs, record.totalItems, counts);
      const first = await publishWebhookEvent(this.js, { id: batchEndedEventId(id), batchId: id, url: record.webhookUrl, body, createdMs: endedMs });
      await this.#records.update(id, (r) => ({ ...r, webhookQueued: true }));
      await this.#records.webhookDone(id);
      if (first) queued.push(id);
    }
    return queued;
  }

  /** Records an attempt of the batch's webhook and its outcome in the batch's record (GetBatch shows it). */
  async webhookAttempted(batchId: string, attempts: number, outcome: WebhookOutcome, nowMs = Date.now()): Promise<void> {
    // Settled stays settled, and attempts only grow: a late write from a gateway that held an earlier delivery changes neither.
    await this.#records.update(batchId, (r) => {
      if (Number(r.webhookDeliveredUnixMs) > 0 || Number(r.webhookGaveUpUnixMs) > 0) return r;
      return {
        ...r,
        webhookAttempts: Math.max(r.webhookAttempts, attempts),
        webhookLastError: outcome.kind === "delivered" ? "" : outcome.error,
        webhookDeliveredUnixMs: outcome.kind === "delivered" ? nowMs : 0,
        webhookGaveUpUnixMs: outcome.kind === "gave-up" ? nowMs : 0,
      };
    });
  }

  /** JetStream failures while NATS is unreachable are UNAVAILABLE (retry), not INTERNAL. */
  async #reachable<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      const text = (err as Error)?.message ?? String(err);
      if (!this.watch.connected || /timeout|disconnect|closed|no responders|connection|503/i.test(text)) {
        throw new ServiceError(status.UNAVAILABLE, `NATS JetStream, where batches are kept, cannot be reached (${text}); retry shortly`, { cause: err });
      }
      throw err;
    }
  }

  changed(batchId: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    return this.#changes.wait(batchId, timeoutMs, signal);
  }

  async close(): Promise<void> {
    await this.#deadLetters.close();
    this.queue.close();
    await this.#view.close();
    await this.#markers.close().catch(() => {});
  }

  /** `count` results of the batch from stream sequence `startSeq` on, in order. */
  async *#read(batchId: string, startSeq: number, count: number, signal: AbortSignal): AsyncIterable<BatchItemResult> {
    const consumer = await this.js.consumers.get(BATCH_RESULTS_STREAM, { filter_subjects: batchResultsFilter(batchId), deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: startSeq });
    const messages = await consumer.consume({ max_messages: Math.min(256, count) });
    const stop = () => void messages.close();
    signal.addEventListener("abort", stop, { once: true });
    try {
      let left = count;
      for await (const m of messages) {
        yield BatchItemResult.decode(m.data);
        if (--left === 0) break;
      }
    } finally {
      signal.removeEventListener("abort", stop);
      await releaseConsumer(consumer, messages);
    }
  }

  async #publishItems(batch: NewBatch): Promise<void> {
    const subject = batchItemsSubject(batch.batchId);
    for (let start = 0; start < batch.items.length; start += PUBLISH_WINDOW) {
      await Promise.all(
        batch.items.slice(start, start + PUBLISH_WINDOW).map((item, k) =>
          this.js.publish(subject, BatchItemJob.encode({ batchId: batch.batchId, index: start + k, item }).finish(), {
            // The digest keeps a reused id's old items from being taken for this batch's.
            msgID: `${batch.batchId}/${batch.itemsSha256.slice(0, 16)}/${start + k}`,
          }),
        ),
      );
    }
  }

  async #batchOf(record: BatchRecord, o: { keep?: boolean } = {}): Promise<Batch> {
    const now = Date.now();
    const view = await this.#view.of(record.batchId, record.resultsFromSeq, o);
    const markers = await RunningMarkers.read(this.#records.kv, record.batchId, now);
    // The view is live (results keep arriving during the awaits above): every figure below is read from it in
    // one synchronous step, so the counts always add up to the total.
    const finished = view.total;
    const running = [...markers].filter((i) => !view.finishedIndices.has(i)).length;
    const total = record.totalItems;
    const counts = { ...view.counts, running, queued: Math.max(0, total - finished - running) };
    const createdMs = Number(record.createdUnixMs);
    const lifecycle = batchLifecycle({ total, counts, cancelled: record.cancelled, submitted: record.published });
    const throughput = batchThroughput({ finishedInWindow: view.finishedSince(windowStart(createdMs, now)), createdMs, nowMs: now, remaining: total - finished });
    const finishedMs = view.finishedMs.length >= total ? view.finishedMs.reduce((a, b) => Math.max(a, b), 0) : undefined;
    return toBatch({
      batchId: record.batchId,
      label: record.label,
      itemsSha256: record.itemsSha256,
      total,
      createdMs,
      ...(finishedMs !== undefined ? { finishedMs } : {}),
      counts,
      lifecycle,
      throughput,
      webhookUrl: record.webhookUrl,
      ...webhookOf(record),
    });
  }
}

/** The record's webhook delivery, as GetBatch shows it ({} when the batch has no webhook). */
function webhookOf(record: BatchRecord): { webhook?: ReturnType<typeof webhookDelivery> } {
  const delivered = Number(record.webhookDeliveredUnixMs);
  const gaveUp = Number(record.webhookGaveUpUnixMs);
  const webhook = webhookDelivery({
    url: record.webhookUrl,
    eventExists: record.webhookQueued,
    attempts: record.webhookAttempts,
    lastError: record.webhookLastError,
    ...(delivered > 0 ? { deliveredMs: delivered } : {}),
    ...(gaveUp > 0 ? { gaveUpMs: gaveUp } : {}),
  });
  return webhook !== undefined ? { webhook } : {};
}
