// One delivery attempt of a batch webhook event, whichever outbox holds it (SQLite or JetStream): POST, signed
// the Standard Webhooks way, to the address that was checked (see webhookTarget.ts). 2xx is delivered; a refused
// target (WebhookTargetRefused) is given up at once; anything else (a host name that does not resolve, an error
// status, a refused connection, no complete answer within the attempt's deadline) is retried with exponential
// backoff until webhookRetryFor has passed since the batch ended.
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { webhookHeaders } from "./signWebhook.js";
import { resolveWebhookTarget, WebhookTargetRefused, type WebhookTarget } from "./webhookTarget.js";
import type { WebhookEvent } from "./webhookOutbox.js";

const MAX_BACKOFF_MS = 600_000;
/** Attempts a sender has under way at once: a slow receiver holds one of them, not the others' events. */
export const WEBHOOK_CONCURRENCY = 8;
/** The error of an attempt cut short because its gateway stopped: it is retried, by this gateway or another. */
export const STOPPED_ERROR = "the gateway stopped during the attempt";

export interface WebhookSending {
  readonly key: Buffer;
  readonly allowedHosts: readonly string[];
  readonly retryForMs: number;
  readonly backoffMs: number;
  /** The most one attempt may take, from resolving the host to the answer's last byte (webhookAttemptTimeoutMs). */
  readonly attemptTimeoutMs: number;
}

export type WebhookOutcome =
  | { readonly kind: "delivered"; readonly code: number }
  | { readonly kind: "retry"; readonly delayMs: number; readonly error: string }
  | { readonly kind: "gave-up"; readonly error: string };

/** `work`, or its signal's reason once it aborts (the name lookup cannot be cancelled, only left behind). */
function orAbort<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener("abort", abort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/** One POST of `body`; resolves with the status code once the answer has ended, rejects on a network error or when `signal` aborts. */
function post(target: WebhookTarget, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<number> {
  // Connect to the checked address, whatever the name resolves to now; TLS still verifies the name.
  const lookup: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const send = target.url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const req = send(target.url, { method: "POST", lookup, headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body), "user-agent": "attr-rag-webhooks" } }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", reject);
    });
    // Connecting, the headers and the body all count: a receiver trickling its answer is cut off too.
    const abort = () => {
      reject(signal.reason);
      req.destroy(signal.reason as Error);
    };
    signal.addEventListener("abort", abort, { once: true });
    req.on("close", () => signal.removeEventListener("abort", abort));
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Attempt number `attempts` (1 for the first) of `event`: what happened, and what to do next. It takes at most
 * `attemptTimeoutMs`; when `stop` aborts it ends at once, as a failed attempt to retry without delay.
 */
export async function attemptWebhook(event: Omit<WebhookEvent, "attempts">, attempts: number, o: WebhookSending, stop?: AbortSignal): Promise<WebhookOutcome> {
  const deadline = AbortSignal.timeout(o.attemptTimeoutMs);
  const signal = stop === undefined ? deadline : AbortSignal.any([stop, deadline]);
  let error: string;
  try {
    const target = await orAbort(resolveWebhookTarget(event.url, o.allowedHosts), signal);
    const code = await post(target, webhookHeaders(o.key, event.id, Math.floor(Date.now() / 1000), event.body), event.body, signal);
    if (code >= 200 && code < 300) return { kind: "delivered", code };
    error = `HTTP ${code}`;
  } catch (err) {
    // Checked at CreateBatch; a name that now resolves inside the network is refused for good.
    if (err instanceof WebhookTargetRefused) return { kind: "gave-up", error: err.message };
    if (stop?.aborted) return { kind: "retry", delayMs: 0, error: STOPPED_ERROR };
    error = deadline.aborted ? `no complete answer within ${o.attemptTimeoutMs / 1000} s` : (err as Error).message;
  }
  const delayMs = Math.min(o.backoffMs * 2 ** (attempts - 1), MAX_BACKOFF_MS);
  if (Date.now() + delayMs - event.createdMs > o.retryForMs) return { kind: "gave-up", error: `${error}, after ${attempts} attempts` };
  return { kind: "retry", delayMs, error };
}

/** The log line of an attempt's outcome. */
export function outcomeLine(event: Pick<WebhookEvent, "id" | "batchId">, attempts: number, outcome: WebhookOutcome): string {
  const what = `webhooks: ${event.id} for batch ${event.batchId}`;
  switch (outcome.kind) {
    case "delivered":
      return `${what} delivered (attempt ${attempts}, HTTP ${outcome.code})`;
    case "retry":
      return `${what} attempt ${attempts} failed (${outcome.error}); again in ${Math.round(outcome.delayMs / 1000)} s`;
    case "gave-up":
      return `${what} given up: ${outcome.error}`;
  }
}
