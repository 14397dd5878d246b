// A gateway's batch webhooks from its config: the signing key (from webhookSecret or webhookSecretFile, never
// from a request), the hosts allowed although internal, and whether this gateway can deliver at all.
import { readFileSync } from "node:fs";
import { status } from "@grpc/grpc-js";
import { ServiceError } from "@attr-rag/index";
import { parseWebhookSecret } from "./signWebhook.js";

/** The gateway settings webhooks read (its config keys of the same names). */
export interface WebhookConfig {
  readonly webhookSecret?: string | undefined;
  readonly webhookSecretFile?: string | undefined;
  readonly webhookAllowedHosts?: string | undefined;
}

export type WebhookSetup = { readonly key: Buffer; readonly allowedHosts: readonly string[] } | { readonly unavailable: ServiceError };

export function webhookSetup(config: WebhookConfig): WebhookSetup {
  if (config.webhookSecret !== undefined && config.webhookSecretFile !== undefined) {
    throw new Error("gateway: give webhookSecret or webhookSecretFile, not both");
  }
  let key: Buffer | undefined;
  if (config.webhookSecret !== undefined) key = parseWebhookSecret(config.webhookSecret, "gateway: webhookSecret");
  if (config.webhookSecretFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(config.webhookSecretFile, "utf8");
    } catch (err) {
      throw new Error(`gateway: cannot read webhookSecretFile ${config.webhookSecretFile}: ${(err as Error).message}`, { cause: err });
    }
    key = parseWebhookSecret(text, `gateway: webhookSecretFile ${config.webhookSecretFile}`);
  }
  if (key === undefined) {
    return { unavailable: new ServiceError(status.FAILED_PRECONDITION, "this gateway has no webhook signing secret: set webhookSecretFile (serve --webhook-secret-file) or ATTR_RAG_WEBHOOK_SECRET") };
  }
  const allowedHosts = (config.webhookAllowedHosts ?? "").split(",").map((h) => h.trim().toLowerCase()).filter((h) => h !== "");
  return { key, allowedHosts };
}
