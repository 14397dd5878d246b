// One delivery attempt of a batch webhook event, whichever outbox holds it (SQLite or JetStream): POST, signed
// the Standard Webhooks way, to the address that was checked (see webhookTarget.ts). 2xx is delivered; anything
// else (an error status, a refused connection, a timeout) is retried with exponential backoff until
// webhookRetryFor has passed since the batch ended.
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { webhookHeaders } from "./signWebhook.js";
import { resolveWebhookTarget, type WebhookTarget } from "./webhookTarget.js";
import type { WebhookEvent } from "./webhookOutbox.js";

const MAX_BACKOFF_MS = 600_000;
const TIMEOUT_MS = 10_000;

export interface WebhookSending {
  readonly key: Buffer;
  readonly allowedHosts: readonly string[];
  readonly retryForMs: number;
  readonly backoffMs: number;
}

export type WebhookOutcome =
  | { readonly kind: "delivered"; readonly code: number }
  | { readonly kind: "retry"; readonly delayMs: number; readonly error: string }
  | { readonly kind: "gave-up"; readonly error: string };

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

/** Attempt number `attempts` (1 for the first) of `event`: what happened, and what to do next. */
export async function attemptWebhook(event: Omit<WebhookEvent, "attempts">, attempts: number, o: WebhookSending): Promise<WebhookOutcome> {
  let target: WebhookTarget;
  try {
    target = await resolveWebhookTarget(event.url, o.allowedHosts);
  } catch (err) {
    // Checked at CreateBatch; a name that now resolves inside the network is refused for good.
    return { kind: "gave-up", error: (err as Error).message };
  }
  let error: string;
  try {
    const code = await post(target, webhookHeaders(o.key, event.id, Math.floor(Date.now() / 1000), event.body), event.body);
    if (code >= 200 && code < 300) return { kind: "delivered", code };
    error = `HTTP ${code}`;
  } catch (err) {
    error = (err as Error).message;
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
