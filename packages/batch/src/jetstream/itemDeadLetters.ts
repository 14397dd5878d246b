import { status } from "@grpc/grpc-js";
import type { Consumer, JetStreamClient, JetStreamManager, JsMsg } from "@nats-io/jetstream";
import { AskRequest, BATCH_DEAD_ITEMS_CONSUMER, BATCH_DEAD_ITEMS_STREAM, BATCH_ITEMS_STREAM, BatchItemJob, BatchItemResult, BatchItemState } from "@attr-rag/contracts";
import { publishResult } from "./JetStreamBatchQueue.js";
import { sleep } from "../sleep.js";

interface MaxDeliveriesAdvisory {
  stream_seq: number;
  deliveries: number;
}

/** How long an advisory whose item could not be read or recorded waits before it is tried again. */
const RETRY_MS = 5_000;
/** A fetch that failed (NATS unreachable) is tried again after this long, not in a tight loop. */
const FETCH_BACKOFF_MS = 2_000;

/**
 * An item whose every delivery ended without a result (the gateways running it crashed each time) would
 * leave its batch running forever: it ends FAILED (INTERNAL) with the reason, and leaves the queue.
 *
 * JetStream says so once, in an advisory. A plain subscription loses it when no gateway listens at that
 * moment or when recording fails; the advisories are kept in the ATTR_RAG_BATCH_DEAD_ITEMS stream instead,
 * and every gateway pulls them from one durable consumer, from its start on: the ones left while no
 * gateway ran are handled first, and one that fails (NATS unreachable, say) is said in the log and
 * tried again until it is recorded. Recording is "only if the item has none", so a runner that recorded
 * its result and died before acknowledging keeps it.
 */
export class ItemDeadLetters {
  readonly #stop = new AbortController();
  readonly #done: Promise<void>;

  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly log: (line: string) => void,
  ) {
    this.#done = this.#run();
  }

  async close(): Promise<void> {
    this.#stop.abort();
    await this.#done;
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    let consumer: Consumer | undefined;
    let failing = false;
    while (!signal.aborted) {
      try {
        consumer ??= await this.js.consumers.get(BATCH_DEAD_ITEMS_STREAM, BATCH_DEAD_ITEMS_CONSUMER);
        const messages = await consumer.fetch({ max_messages: 16, expires: 2_000 });
        const stop = () => void messages.close();
        signal.addEventListener("abort", stop, { once: true });
        try {
          for await (const m of messages) await this.#handle(m);
        } finally {
          signal.removeEventListener("abort", stop);
        }
        failing = false;
      } catch (err) {
        if (signal.aborted) break;
        // Said once per outage, not once per retry.
        if (!failing) this.log(`batch dead items: cannot read the advisories of items that ran out of deliveries (${(err as Error).message}); retrying every ${FETCH_BACKOFF_MS / 1000} s`);
        failing = true;
        await sleep(FETCH_BACKOFF_MS, signal);
      }
    }
  }

  async #handle(m: JsMsg): Promise<void> {
    let advisory: MaxDeliveriesAdvisory;
    try {
      advisory = m.json<MaxDeliveriesAdvisory>();
      if (!Number.isInteger(advisory.stream_seq)) throw new Error("no stream_seq");
    } catch (err) {
      this.log(`batch dead items: advisory #${m.seq} is not a max-deliveries advisory (${(err as Error).message}); dropped`);
      m.term();
      return;
    }
    try {
      const stored = await this.jsm.streams.getMessage(BATCH_ITEMS_STREAM, { seq: advisory.stream_seq }).catch((err: unknown) => {
        if (/no message found/i.test((err as Error).message)) return null;
        throw err;
      });
      // Gone from the work queue: acknowledged by its runner, or already recorded by another gateway.
      if (stored !== null) {
        let job: BatchItemJob;
        try {
          job = BatchItemJob.decode(stored.data);
        } catch (err) {
          // The runners drop such a message too, saying so.
          this.log(`batch dead items: item #${advisory.stream_seq} is not a BatchItemJob (${(err as Error).message}); dropped`);
          m.ack();
          return;
        }
        await this.#fail(job, advisory);
      }
      m.ack();
    } catch (err) {
      this.log(`batch dead items: item #${advisory.stream_seq} ran out of deliveries, and recording it FAILED did not work (${(err as Error).message}); retrying in ${RETRY_MS / 1000} s`);
      m.nak(RETRY_MS);
    }
  }

  async #fail(job: BatchItemJob, advisory: MaxDeliveriesAdvisory): Promise<void> {
    const reason = `the item failed on all ${advisory.deliveries} of its deliveries (the gateways running it crashed or lost NATS each time)`;
    const recorded = await publishResult(
      this.js,
      BatchItemResult.fromPartial({
        batchId: job.batchId,
        itemId: job.item?.itemId ?? "",
        index: job.index,
        question: (job.item?.request ?? AskRequest.create()).question,
        state: BatchItemState.BATCH_ITEM_STATE_FAILED,
        statusCode: status.INTERNAL,
        statusMessage: reason,
        attempts: advisory.deliveries,
        finishedUnixMs: Date.now(),
      }),
      advisory.stream_seq,
    );
    await this.jsm.streams.deleteMessage(BATCH_ITEMS_STREAM, advisory.stream_seq).catch((err: unknown) => {
      if (!/no message found/i.test((err as Error).message)) throw err;
    });
    if (recorded) this.log(`batch ${job.batchId}: item ${job.item?.itemId || job.index}: ${reason}`);
  }
}
