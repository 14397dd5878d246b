// Standard Webhooks signatures (https://www.standardwebhooks.com): the receiver recomputes
// HMAC-SHA256(secret, "<webhook-id>.<webhook-timestamp>.<body>") and compares it with webhook-signature.
import { createHmac } from "node:crypto";

/** A secret as Standard Webhooks writes it: "whsec_" + base64 of at least 24 random bytes. */
export function parseWebhookSecret(text: string, where: string): Buffer {
  const trimmed = text.trim();
  const b64 = trimmed.startsWith("whsec_") ? trimmed.slice("whsec_".length) : trimmed;
  const key = Buffer.from(b64, "base64");
  if (b64 === "" || key.toString("base64").replace(/=+$/, "") !== b64.replace(/=+$/, "") || key.length < 24) {
    throw new Error(`${where}: the webhook signing secret must be "whsec_" and the base64 of at least 24 random bytes (e.g. \`echo whsec_$(openssl rand -base64 32)\`)`);
  }
  return key;
}

/** The three headers of one delivery of `body` (the exact bytes sent). */
export function webhookHeaders(key: Buffer, id: string, timestampS: number, body: string): Record<string, string> {
  const signature = createHmac("sha256", key).update(`${id}.${timestampS}.${body}`).digest("base64");
  return { "webhook-id": id, "webhook-timestamp": String(timestampS), "webhook-signature": `v1,${signature}` };
}
