import type { Consumer, ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg } from "@nats-io/jetstream";
import { BATCH_RESULTS_STREAM, batchResultsFilter } from "@attr-rag/contracts";
import type { ChangeSignal } from "../changeSignal.js";

/** Headers every result is published with, so counting needs no payloads (headers-only delivery). */
export const RESULT_STATE_HEADER = "Attr-Rag-Item-State";
export const RESULT_FINISHED_HEADER = "Attr-Rag-Finished-Ms";

export type ResultEnd = "succeeded" | "failed" | "cancelled";

/** What a gateway knows of one batch's results: a cache of the results stream, rebuilt by reading it again. */
export class BatchResults {
  readonly counts: Record<ResultEnd, number> = { succeeded: 0, failed: 0, cancelled: 0 };
  /** Stream sequence of each result, in stream order: seqs[offset] is where ListBatchResults starts. */
  readonly seqs: number[] = [];
  /** Recording time of each result (Unix ms), in stream order. */
  readonly finishedMs: number[] = [];
  /** Item indices that have a result. */
  readonly finishedIndices = new Set<number>();
  lastUsed = Date.now();

  get total(): number {
    return this.seqs.length;
  }

  /** Results recorded at or after `sinceMs`. */
  finishedSince(sinceMs: number): number {
    let n = 0;
    for (let i = this.finishedMs.length - 1; i >= 0; i--) if (this.finishedMs[i]! >= sinceMs) n++;
    return n;
  }

  constructor(private readonly fromSeq = 0) {}

  add(m: JsMsg): void {
    if (m.seq < this.fromSeq) return; // an earlier batch's under the same id (BatchRecord.results_from_seq)
    const end = m.headers?.get(RESULT_STATE_HEADER) as ResultEnd | undefined;
    const index = Number(m.subject.slice(m.subject.lastIndexOf(".") + 1));
    if (end === undefined || !(end in this.counts) || this.finishedIndices.has(index)) return;
    this.counts[end]++;
    this.seqs.push(m.seq);
    this.finishedMs.push(Number(m.headers?.get(RESULT_FINISHED_HEADER) ?? 0) || Math.floor(m.info.timestampNanos / 1e6));
    this.finishedIndices.add(index);
  }
}

interface Tail {
  results: BatchResults;
  ready: Promise<void>;
  consumer?: Consumer;
  messages?: ConsumerMessages;
}

/** Stops reading and deletes the consumer now (an ordered consumer otherwise stays on the server for 5 minutes). */
export async function releaseConsumer(consumer: Consumer | undefined, messages: ConsumerMessages | undefined): Promise<void> {
  await messages?.close().catch(() => {});
  await consumer?.delete().catch(() => {});
}

/**
 * Per batch, an ordered headers-only consumer that follows its results: counts, offsets and the rate are read
 * from memory (fast with 10,000 results), and the first read of a batch waits until the cache caught up with
 * what the stream held when it started. Batches nobody asked about for IDLE_MS are let go.
 */
export class ResultsView {
  static readonly IDLE_MS = 10 * 60_000;
  readonly #tails = new Map<string, Tail>();
  readonly #sweep: NodeJS.Timeout;

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly changes: ChangeSignal,
  ) {
    this.#sweep = setInterval(() => this.#evictIdle(), 60_000).unref();
  }

  /** The results of the batch whose record says they start at stream sequence `fromSeq`. */
  async of(batchId: string, fromSeq = 0, o: { keep?: boolean } = {}): Promise<BatchResults> {
    // Keyed by both: a view of an earlier batch under this id (its record expired) is never this one's.
    const key = `${batchId}@${fromSeq}`;
    let tail = this.#tails.get(key);
    if (tail === undefined && o.keep === false) {
      // Read once and let go (a ListBatches page): no consumer is held for the batches a listing merely shows.
      const once: Tail = { results: new BatchResults(fromSeq), ready: Promise.resolve() };
      try {
        await this.#follow(batchId, once);
      } finally {
        await releaseConsumer(once.consumer, once.messages);
      }
      return once.results;
    }
    if (tail === undefined) {
      const results = new BatchResults(fromSeq);
      const entry: Tail = { results, ready: Promise.resolve() };
      entry.ready = this.#follow(batchId, entry).catch((err: unknown) => {
        this.#tails.delete(key);
        throw err;
      });
      this.#tails.set(key, (tail = entry));
    }
    tail.results.lastUsed = Date.now();
    await tail.ready;
    return tail.results;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweep);
    const tails = [...this.#tails.values()];
    this.#tails.clear();
    await Promise.all(tails.map((tail) => releaseConsumer(tail.consumer, tail.messages)));
  }

  async #follow(batchId: string, entry: Tail): Promise<void> {
    const filter = batchResultsFilter(batchId);
    // What the stream holds now: the cache is caught up once it has read up to here.
    const info = await this.jsm.streams.info(BATCH_RESULTS_STREAM);
    const lastSeq = info.state.last_seq;
    const consumer = await this.js.consumers.get(BATCH_RESULTS_STREAM, { filter_subjects: filter, headers_only: true });
    entry.consumer = consumer;
    let caught = false;
    let caughtUp!: () => void;
    const ready = new Promise<void>((resolve) => (caughtUp = () => ((caught = true), resolve())));
    let seen = 0;
    let received = 0;
    entry.messages = await consumer.consume({
      callback: (m) => {
        entry.results.add(m);
        seen = m.seq;
        received++;
        if (m.seq >= lastSeq || m.info.pending === 0) caughtUp();
        this.changes.notify(batchId);
      },
    });
    if (lastSeq === 0) caughtUp();
    // No message at all means nothing matched up to lastSeq; the consumer's own count says so.
    void (async () => {
      for (let i = 0; i < 100 && seen < lastSeq && !caught; i++) {
        const ci = await consumer.info().catch(() => undefined);
        // Everything the filter matches was handed out, and handled here. (Not the stream sequence: with no
        // result of this batch yet, the consumer reports the stream's, and the check waited its full 2 s.)
        if (ci !== undefined && ci.num_pending === 0 && ci.delivered.consumer_seq <= received) return caughtUp();
        await new Promise((r) => setTimeout(r, 20));
      }
      caughtUp();
    })();
    await ready;
  }

  #evictIdle(): void {
    const cutoff = Date.now() - ResultsView.IDLE_MS;
    for (const [id, tail] of this.#tails) {
      if (tail.results.lastUsed < cutoff) {
        void releaseConsumer(tail.consumer, tail.messages);
        this.#tails.delete(id);
      }
    }
  }
}
