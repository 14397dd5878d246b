// Delivers batch webhook events from the SQLite outbox (embedded gateway): each due event is attempted
// (attemptWebhook.ts) and its outcome written back, so a restart resumes where the last process stopped.
// Several events are attempted at once, so one slow receiver does not hold up the others' events.
import type { ServiceLog } from "@attr-rag/index";
import { attemptWebhook, outcomeLine, WEBHOOK_CONCURRENCY, type WebhookSending } from "./attemptWebhook.js";
import { countWebhookAttempt } from "../metrics/webhookMetrics.js";
import type { WebhookEvent, WebhookOutbox } from "./webhookOutbox.js";

/** How often the outbox is looked at when nothing woke the deliverer (events another process queued). */
const POLL_MS = 1_000;

export interface WebhookDelivererOptions extends WebhookSending {
  readonly outbox: WebhookOutbox & { webhookQueued(timeoutMs: number, signal: AbortSignal): Promise<void> };
  readonly log: ServiceLog;
}

export class WebhookDeliverer {
  readonly #stop = new AbortController();
  /** Attempts under way, by event id. */
  readonly #inFlight = new Map<string, Promise<void>>();
  /** Aborted when an attempt ends, so the loop looks for the next due event at once. */
  #attemptEnded = new AbortController();
  #loop: Promise<void> | undefined;

  constructor(private readonly o: WebhookDelivererOptions) {}

  start(): this {
    this.#loop ??= this.#run();
    return this;
  }

  /** Stops taking events and cuts the attempts under way short (each recorded as failed, so it is retried after a restart). */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
    await Promise.all(this.#inFlight.values());
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      const ended = this.#attemptEnded.signal;
      try {
        if (this.#inFlight.size < WEBHOOK_CONCURRENCY) {
          // The oldest due events, those under way among them (still due until their outcome is written).
          for (const event of this.o.outbox.dueWebhooks(Date.now(), WEBHOOK_CONCURRENCY)) {
            if (this.#inFlight.size >= WEBHOOK_CONCURRENCY) break;
            if (!this.#inFlight.has(event.id)) this.#inFlight.set(event.id, this.#deliver(event));
          }
        }
      } catch (err) {
        if (signal.aborted) return;
        this.o.log(`webhooks: ${(err as Error).message}`);
      }
      await this.o.outbox.webhookQueued(POLL_MS, AbortSignal.any([signal, ended]));
    }
  }

  async #deliver(event: WebhookEvent): Promise<void> {
    const attempts = event.attempts + 1;
    try {
      const outcome = await attemptWebhook(event, attempts, this.o, this.#stop.signal);
      countWebhookAttempt(outcome);
      if (outcome.kind === "delivered") this.o.outbox.webhookDelivered(event.id, Date.now());
      else if (outcome.kind === "retry") this.o.outbox.webhookRetry(event.id, attempts, Date.now() + outcome.delayMs, outcome.error);
      else this.o.outbox.webhookGaveUp(event.id, attempts, Date.now(), outcome.error);
      this.o.log(outcomeLine(event, attempts, outcome));
    } catch (err) {
      this.o.log(`webhooks: cannot record the attempt of ${event.id} (${(err as Error).message}); it is made again`);
    } finally {
      this.#inFlight.delete(event.id);
      this.#attemptEnded.abort();
      this.#attemptEnded = new AbortController();
    }
  }
}
