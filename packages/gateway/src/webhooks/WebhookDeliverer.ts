// Delivers batch webhook events from the outbox: POST, signed the Standard Webhooks way, to the address that was
// checked (see webhookTarget.ts); 2xx is delivered, anything else (an error status, a refused connection, a
// timeout) is retried with exponential backoff until webhookRetryFor has passed since the batch ended.
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import type { ServiceLog } from "@attr-rag/index";
import { webhookHeaders } from "./signWebhook.js";
import { resolveWebhookTarget, type WebhookTarget } from "./webhookTarget.js";
import type { WebhookEvent, WebhookOutbox } from "./webhookOutbox.js";

const MAX_BACKOFF_MS = 600_000;
const TIMEOUT_MS = 10_000;
/** How often the outbox is looked at when nothing woke the deliverer (events another process queued). */
const POLL_MS = 1_000;

export interface WebhookDelivererOptions {
  readonly outbox: WebhookOutbox & { webhookQueued(timeoutMs: number, signal: AbortSignal): Promise<void> };
  readonly key: Buffer;
  readonly allowedHosts: readonly string[];
  readonly retryForMs: number;
  readonly backoffMs: number;
  readonly log: ServiceLog;
}

/** One POST of `body`; resolves with the status code, rejects on a network error or timeout. */
function post(target: WebhookTarget, headers: Record<string, string>, body: string): Promise<number> {
  // Connect to the checked address, whatever the name resolves to now; TLS still verifies the name.
  const lookup: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const send = target.url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      target.url,
      { method: "POST", lookup, timeout: TIMEOUT_MS, headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body), "user-agent": "attr-rag-webhooks" } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on("error", reject);
    req.end(body);
  });
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
    const now = Date.now();
    let error: string;
    let target: WebhookTarget;
    try {
      target = await resolveWebhookTarget(event.url, this.o.allowedHosts);
    } catch (err) {
      // Checked at CreateBatch; a name that now resolves inside the network is refused for good.
      this.o.outbox.webhookGaveUp(event.id, attempts, now, (err as Error).message);
      this.o.log(`webhooks: ${event.id} for batch ${event.batchId} given up: ${(err as Error).message}`);
      return;
    }
    try {
      const code = await post(target, webhookHeaders(this.o.key, event.id, Math.floor(Date.now() / 1000), event.body), event.body);
      if (code >= 200 && code < 300) {
        this.o.outbox.webhookDelivered(event.id, Date.now());
        this.o.log(`webhooks: ${event.id} for batch ${event.batchId} delivered (attempt ${attempts}, HTTP ${code})`);
        return;
      }
      error = `HTTP ${code}`;
    } catch (err) {
      error = (err as Error).message;
    }
    const next = Date.now() + Math.min(this.o.backoffMs * 2 ** (attempts - 1), MAX_BACKOFF_MS);
    if (next - event.createdMs > this.o.retryForMs) {
      this.o.outbox.webhookGaveUp(event.id, attempts, Date.now(), error);
      this.o.log(`webhooks: ${event.id} for batch ${event.batchId} given up after ${attempts} attempts: ${error}`);
    } else {
      this.o.outbox.webhookRetry(event.id, attempts, next, error);
      this.o.log(`webhooks: ${event.id} for batch ${event.batchId} attempt ${attempts} failed (${error}); again in ${Math.round((next - Date.now()) / 1000)} s`);
    }
  }
}
