// Delivers batch webhook events in distributed mode. Two loops per gateway: one queues the events of batches
// that ended (JetStreamBatchStore.queueEndedWebhooks), one takes events from the shared work queue and
// attempts them (attemptWebhook.ts), several at once. A failed attempt goes back to the queue with its
// backoff, so the next attempt may be any gateway's; one event is never with two gateways at once.
import type { ServiceLog } from "@attr-rag/index";
import type { JetStreamBatchStore } from "../jetstream/JetStreamBatchStore.js";
import type { ClaimedWebhook } from "../jetstream/webhookQueue.js";
import { attemptWebhook, outcomeLine, WEBHOOK_CONCURRENCY, type WebhookSending } from "./attemptWebhook.js";
import { countWebhookAttempt } from "../metrics/webhookMetrics.js";
import { sleep } from "../sleep.js";

/** How often the batches with a webhook are looked at: an event is queued within this long of its batch ending. */
const SWEEP_MS = 1_000;
/** A loop that failed (NATS unreachable) tries again after this long, saying so once per outage. */
const FAILING_BACKOFF_MS = 2_000;

export interface JetStreamWebhookSenderOptions extends WebhookSending {
  readonly store: JetStreamBatchStore;
  /** How long the queue waits for a settled event before another gateway gets it; `working()` is said more often. */
  readonly ackWaitMs: number;
  readonly log: ServiceLog;
}

export class JetStreamWebhookSender {
  readonly #stop = new AbortController();
  /** Attempts under way. */
  readonly #inFlight = new Set<Promise<void>>();
  #loops: Promise<void> | undefined;

  constructor(private readonly o: JetStreamWebhookSenderOptions) {}

  start(): this {
    this.#loops ??= Promise.all([this.#loop("queueing ended batches' events", () => this.#sweep()), this.#loop("taking events to deliver", () => this.#deliverNext())]).then(() => {});
    return this;
  }

  /**
   * Stops taking events and cuts the attempts under way short: each is recorded as failed and goes back to the
   * queue, for any gateway to take a few seconds later (ClaimedWebhook.release).
   */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loops;
    await Promise.all(this.#inFlight);
  }

  async #loop(what: string, step: () => Promise<void>): Promise<void> {
    const signal = this.#stop.signal;
    let failing = false;
    while (!signal.aborted) {
      try {
        await step();
        failing = false;
      } catch (err) {
        if (signal.aborted) return;
        if (!failing) this.o.log(`webhooks: ${what} failed (${(err as Error).message}); retrying every ${FAILING_BACKOFF_MS / 1000} s`);
        failing = true;
        await sleep(FAILING_BACKOFF_MS, signal);
      }
    }
  }

  async #sweep(): Promise<void> {
    for (const id of await this.o.store.queueEndedWebhooks()) this.o.log(`webhooks: batch ${id} ended; its event is queued`);
    await sleep(SWEEP_MS, this.#stop.signal);
  }

  /** Takes the next event once fewer than WEBHOOK_CONCURRENCY attempts are under way, and starts its attempt. */
  async #deliverNext(): Promise<void> {
    while (this.#inFlight.size >= WEBHOOK_CONCURRENCY) await Promise.race(this.#inFlight);
    if (this.#stop.signal.aborted) return;
    const claimed = await this.o.store.webhooks.next(this.#stop.signal);
    if (claimed === undefined) return;
    // Taken as the gateway stops: back to the queue untried.
    if (this.#stop.signal.aborted) {
      this.o.log(`webhooks: ${claimed.event.id} for batch ${claimed.event.batchId} taken as the gateway stops; back to the queue untried`);
      return claimed.release();
    }
    const attempt = this.#deliver(claimed).finally(() => this.#inFlight.delete(attempt));
    this.#inFlight.add(attempt);
  }

  async #deliver(claimed: ClaimedWebhook): Promise<void> {
    const { event } = claimed;
    const attempts = event.attempts + 1;
    // A receiver may take up to the attempt's deadline: the queue hears from us meanwhile.
    const working = setInterval(() => claimed.working(), Math.max(200, Math.floor(this.o.ackWaitMs / 3)));
    try {
      const outcome = await attemptWebhook(event, attempts, this.o, this.#stop.signal);
      countWebhookAttempt(outcome);
      this.o.log(outcomeLine(event, attempts, outcome));
      // Recorded before the event is settled: a gateway dying in between makes the next attempt, never a lost one.
      await this.o.store.webhookAttempted(event.batchId, attempts, outcome).catch((err: unknown) => this.o.log(`webhooks: cannot record the attempt on batch ${event.batchId} (${(err as Error).message})`));
      if (this.#stop.signal.aborted && outcome.kind === "retry") claimed.release();
      else if (outcome.kind === "retry") claimed.retry(outcome.delayMs);
      else await claimed.done();
    } catch (err) {
      // Left unsettled, it is handed out again after ack_wait.
      this.o.log(`webhooks: ${event.id} for batch ${event.batchId}: ${(err as Error).message}`);
    } finally {
      clearInterval(working);
    }
  }
}
