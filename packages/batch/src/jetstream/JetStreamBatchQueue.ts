import { headers, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import type { Consumer, JetStreamClient, JetStreamManager, JsMsg } from "@nats-io/jetstream";
import { AskRequest, BATCH_CANCEL_SUBJECTS, BATCH_RESULTS_STREAM, BatchItemJob, BatchItemResult, BatchItemState, batchResultSubject } from "@attr-rag/contracts";
import type { BatchQueue, ClaimedItem } from "../batchStore.js";
import { cancelledResult, CANCELLED_BEFORE_START } from "../itemResult.js";
import type { BatchQueueSettings } from "./batchStreams.js";
import type { BatchRecords } from "./batchRecords.js";
import { RESULT_FINISHED_HEADER, RESULT_STATE_HEADER, type ResultEnd } from "./ResultsView.js";
import type { RunningMarkers } from "./runningMarkers.js";

const END_OF: Partial<Record<BatchItemState, ResultEnd>> = {
  [BatchItemState.BATCH_ITEM_STATE_SUCCEEDED]: "succeeded",
  [BatchItemState.BATCH_ITEM_STATE_FAILED]: "failed",
  [BatchItemState.BATCH_ITEM_STATE_CANCELLED]: "cancelled",
};

/** `attr-rag soak --defect …` (a comma-separated list): a fault switched on on purpose (read once, not per result). */
const SOAK_RESULT_LOST = (process.env.ATTR_RAG_SOAK_DEFECT ?? "").split(",").includes("result-lost");
let lostForSoak = false;

/**
 * Records an item's one result: published on the item's own subject with "only if that subject is empty"
 * (Nats-Expected-Last-Subject-Sequence: 0), so two runners can never both record one, whatever the timing.
 * False when it already had a result. `itemSeq`, the item's message in the items stream, makes the message id
 * (a retried publish is dropped as a duplicate) that of this batch's item, not of an earlier batch's under
 * the same id.
 */
export async function publishResult(js: JetStreamClient, result: BatchItemResult, itemSeq: number): Promise<boolean> {
  const end = END_OF[result.state];
  if (end === undefined) throw new Error(`a batch item ends SUCCEEDED, FAILED or CANCELLED, not ${result.state}`);
  // A deliberate defect for `attr-rag soak --defect result-lost`, which must see its checker catch it: the
  // first result this process records is reported recorded and never published.
  if (SOAK_RESULT_LOST && !lostForSoak) {
    lostForSoak = true;
    return true;
  }
  const h = headers();
  h.set(RESULT_STATE_HEADER, end);
  h.set(RESULT_FINISHED_HEADER, String(result.finishedUnixMs));
  try {
    const ack = await js.publish(batchResultSubject(result.batchId, result.index), BatchItemResult.encode({ ...result, offset: 0 }).finish(), {
      headers: h,
      msgID: `${result.batchId}/${result.index}/${itemSeq}`,
      expect: { lastSubjectSequence: 0 },
    });
    // Within the duplicate window JetStream drops a repeat by its message id before it checks the expected
    // sequence, and acks it as a duplicate: the item already had its result, this one was not recorded.
    return !ack.duplicate;
  } catch (err) {
    if (/wrong last sequence|last sequence mismatch/i.test((err as Error).message)) return false;
    throw err;
  }
}

/**
 * The runners' side in distributed mode: every gateway pulls items from one durable consumer of the items
 * work queue, so each item goes to one runner at a time; a runner that dies leaves its items unacknowledged
 * and after ack_wait another gateway gets them. An item that already has a result (its runner died after
 * recording it) is acknowledged without running; an item of a cancelled batch ends CANCELLED without running.
 */
export class JetStreamBatchQueue implements BatchQueue {
  readonly #cancelListeners = new Set<(batchId: string) => void>();
  readonly #cancelSub: Subscription;
  readonly #recheck: NodeJS.Timeout;

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly consumer: Consumer,
    private readonly records: BatchRecords,
    private readonly markers: RunningMarkers,
    private readonly settings: BatchQueueSettings,
    private readonly log: (line: string) => void,
  ) {
    this.#cancelSub = nc.subscribe(BATCH_CANCEL_SUBJECTS, { callback: (err, msg) => { if (!err) this.#announce(msg.subject.slice(msg.subject.lastIndexOf(".") + 1)); } });
    // A cancel broadcast missed while disconnected is still found: the records of running batches are re-read.
    this.#recheck = setInterval(() => void this.#recheckCancels(), 5_000).unref();
  }

  onCancel(listener: (batchId: string) => void): () => void {
    this.#cancelListeners.add(listener);
    return () => this.#cancelListeners.delete(listener);
  }

  async next(signal: AbortSignal): Promise<ClaimedItem | undefined> {
    while (!signal.aborted) {
      const m = await this.#pull(signal);
      if (m === undefined) continue;
      const claimed = await this.#claim(m).catch((err: unknown) => {
        this.log(`batch runner ${this.markers.runnerId}: item ${m.subject} #${m.seq}: ${(err as Error).message}; it will be redelivered`);
        m.nak(2_000);
        return undefined;
      });
      if (claimed !== undefined) return claimed;
    }
    return undefined;
  }

  close(): void {
    clearInterval(this.#recheck);
    this.#cancelSub.unsubscribe();
  }

  async #pull(signal: AbortSignal): Promise<JsMsg | undefined> {
    const messages = await this.consumer.fetch({ max_messages: 1, expires: 2_000 });
    const stop = () => void messages.close();
    signal.addEventListener("abort", stop, { once: true });
    try {
      for await (const m of messages) return m;
      return undefined;
    } finally {
      signal.removeEventListener("abort", stop);
    }
  }

  async #claim(m: JsMsg): Promise<ClaimedItem | undefined> {
    let job: BatchItemJob;
    try {
      job = BatchItemJob.decode(m.data);
    } catch (err) {
      this.log(`batch runner: ${m.subject} #${m.seq} is not a BatchItemJob (${(err as Error).message}); dropped`);
      m.term();
      return undefined;
    }
    const { batchId, index } = job;
    const item = job.item ?? { itemId: "", request: AskRequest.create() };
    const record = await this.records.get(batchId);
    if (record === undefined) {
      this.log(`batch runner: item ${index} of unknown batch ${batchId} dropped`);
      m.term();
      return undefined;
    }
    if (m.seq < record.itemsFromSeq) {
      this.log(`batch runner: item ${index} #${m.seq} was queued by an earlier batch ${batchId} (its record expired and the id was used again); dropped`);
      m.term();
      return undefined;
    }
    const existing = await this.jsm.streams.getMessage(BATCH_RESULTS_STREAM, { last_by_subj: batchResultSubject(batchId, index) }).catch(() => null);
    if (existing !== null && existing.seq >= record.resultsFromSeq) {
      m.ack(); // its runner recorded the result and died before acknowledging: never run it twice
      return undefined;
    }
    const request = item.request ?? AskRequest.create();
    if (record.cancelled) {
      await publishResult(this.js, cancelledResult({ batchId, itemId: item.itemId, index, question: request.question }, CANCELLED_BEFORE_START), m.seq);
      m.ack();
      return undefined;
    }
    this.markers.started(batchId, index);
    const working = setInterval(() => m.working(), Math.max(500, Math.floor(this.settings.ackWaitMs / 3)));
    let settled = false;
    const settle = () => {
      settled = true;
      clearInterval(working);
      this.markers.ended(batchId, index);
    };
    return {
      batchId,
      index,
      itemId: item.itemId,
      request,
      attempt: m.info.deliveryCount,
      batchTraceparent: record.traceparent,
      complete: async (result) => {
        const recorded = await publishResult(this.js, result, m.seq);
        if (!settled) {
          settle();
          await m.ackAck().catch(() => false);
        }
        return recorded;
      },
      release: async (delayMs) => {
        if (settled) return;
        settle();
        m.nak(delayMs);
      },
    };
  }

  #announce(batchId: string): void {
    for (const listener of this.#cancelListeners) listener(batchId);
  }

  async #recheckCancels(): Promise<void> {
    for (const batchId of this.markers.batches()) {
      const record = await this.records.get(batchId, { fresh: true }).catch(() => undefined);
      if (record?.cancelled) this.#announce(batchId);
    }
  }
}
