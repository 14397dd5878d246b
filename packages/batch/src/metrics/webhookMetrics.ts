import { counter } from "@attr-rag/telemetry";
import type { WebhookOutcome } from "../webhooks/attemptWebhook.js";

const OUTCOMES: Record<WebhookOutcome["kind"], string> = { delivered: "delivered", retry: "failed", "gave-up": "gave_up" };

const attempts = () =>
  counter({
    name: "attr_rag_webhook_attempts_total",
    help: "Batch webhook deliveries this gateway attempted, by outcome: delivered (2xx), failed (retried later), gave_up (retry time over, or a refused target).",
    labelNames: ["outcome"],
  });

export function countWebhookAttempt(outcome: WebhookOutcome): void {
  attempts().inc({ outcome: OUTCOMES[outcome.kind] });
}
