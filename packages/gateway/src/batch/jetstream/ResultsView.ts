import type { ConsumerMessages, JetStreamClient, JetStreamManager, JsMsg } from "@nats-io/jetstream";
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

  add(m: JsMsg): void {
    const end = m.headers?.get(RESULT_STATE_HEADER) as ResultEnd | undefined;
    const index = Number(m.subject.slice(m.subject.lastIndexOf(".") + 1));
    if (end === undefined || !(end in this.counts) || this.finishedIndices.has(index)) return;
    this.counts[end]++;
    this.seqs.push(m.seq);
    this.finishedMs.push(Number(m.headers?.get(RESULT_FINISHED_HEADER) ?? 0) || Math.floor(m.info.timestampNanos / 1e6));
    this.finishedIndices.add(index);
  }
}

/**
 * Per batch, an ordered headers-only consumer that follows its results: counts, offsets and the rate are read
 * from memory (fast with 10,000 results), and the first read of a batch waits until the cache caught up with
 * what the stream held when it started. Batches nobody asked about for IDLE_MS are let go.
 */
export class ResultsView {
  static readonly IDLE_MS = 10 * 60_000;
  readonly #tails = new Map<string, { results: BatchResults; ready: Promise<void>; messages?: ConsumerMessages }>();
  readonly #sweep: NodeJS.Timeout;

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly changes: ChangeSignal,
  ) {
    this.#sweep = setInterval(() => this.#evictIdle(), 60_000).unref();
  }

  async of(batchId: string): Promise<BatchResults> {
    let tail = this.#tails.get(batchId);
    if (tail === undefined) {
      const results = new BatchResults();
      const entry: { results: BatchResults; ready: Promise<void>; messages?: ConsumerMessages } = { results, ready: Promise.resolve() };
      entry.ready = this.#follow(batchId, entry).catch((err: unknown) => {
        this.#tails.delete(batchId);
        throw err;
      });
      this.#tails.set(batchId, (tail = entry));
    }
    tail.results.lastUsed = Date.now();
    await tail.ready;
    return tail.results;
  }

  close(): void {
    clearInterval(this.#sweep);
    for (const tail of this.#tails.values()) void tail.messages?.close();
    this.#tails.clear();
  }

  async #follow(batchId: string, entry: { results: BatchResults; messages?: ConsumerMessages }): Promise<void> {
    const filter = batchResultsFilter(batchId);
    // What the stream holds now: the cache is caught up once it has read up to here.
    const info = await this.jsm.streams.info(BATCH_RESULTS_STREAM);
    const lastSeq = info.state.last_seq;
    const consumer = await this.js.consumers.get(BATCH_RESULTS_STREAM, { filter_subjects: filter, headers_only: true });
    let caughtUp!: () => void;
    const ready = new Promise<void>((resolve) => (caughtUp = resolve));
    let seen = 0;
    entry.messages = await consumer.consume({
      callback: (m) => {
        entry.results.add(m);
        seen = m.seq;
        if (m.seq >= lastSeq || m.info.pending === 0) caughtUp();
        this.changes.notify(batchId);
      },
    });
    if (lastSeq === 0) caughtUp();
    // No message at all means nothing matched up to lastSeq; the consumer's own count says so.
    void (async () => {
      for (let i = 0; i < 100 && seen < lastSeq; i++) {
        const ci = await consumer.info().catch(() => undefined);
        if (ci !== undefined && ci.num_pending === 0 && ci.delivered.stream_seq <= seen) return caughtUp();
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
        void tail.messages?.close();
        this.#tails.delete(id);
      }
    }
  }
}
