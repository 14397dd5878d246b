// Delivers batch webhook events from the SQLite outbox (embedded gateway): each due event is attempted
// (attemptWebhook.ts) and its outcome written back, so a restart resumes where the last process stopped.
import type { ServiceLog } from "@attr-rag/index";
import { attemptWebhook, outcomeLine, type WebhookSending } from "./attemptWebhook.js";
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
  #loop: Promise<void> | undefined;

  constructor(private readonly o: WebhookDelivererOptions) {}

  start(): this {
    this.#loop ??= this.#run();
    return this;
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      try {
        const due = this.o.outbox.dueWebhooks(Date.now(), 16);
        for (const event of due) {
          if (signal.aborted) return;
          await this.#deliver(event);
        }
        if (due.length === 16) continue;
      } catch (err) {
        if (signal.aborted) return;
        this.o.log(`webhooks: ${(err as Error).message}`);
      }
      await this.o.outbox.webhookQueued(POLL_MS, signal);
    }
  }

  async #deliver(event: WebhookEvent): Promise<void> {
    const attempts = event.attempts + 1;
    const outcome = await attemptWebhook(event, attempts, this.o);
    countWebhookAttempt(outcome);
    if (outcome.kind === "delivered") this.o.outbox.webhookDelivered(event.id, Date.now());
    else if (outcome.kind === "retry") this.o.outbox.webhookRetry(event.id, attempts, Date.now() + outcome.delayMs, outcome.error);
    else this.o.outbox.webhookGaveUp(event.id, attempts, Date.now(), outcome.error);
    this.o.log(outcomeLine(event, attempts, outcome));
  }
}
