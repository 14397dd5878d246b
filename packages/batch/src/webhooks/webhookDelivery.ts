import { WebhookDelivery, WebhookDeliveryState } from "@attr-rag/contracts";

/** What a store knows of a batch's webhook delivery, the same in both modes. */
export interface WebhookDeliveryFacts {
  readonly url: string;
  /** The batch ended and its event exists (SQLite outbox row, or queued in JetStream). */
  readonly eventExists: boolean;
  readonly attempts: number;
  readonly lastError: string;
  readonly deliveredMs?: number;
  readonly gaveUpMs?: number;
}

/** GetBatch's `webhook`; undefined for a batch without a webhook. */
export function webhookDelivery(f: WebhookDeliveryFacts): WebhookDelivery | undefined {
  if (f.url === "") return undefined;
  const state =
    f.deliveredMs !== undefined
      ? WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_DELIVERED
      : f.gaveUpMs !== undefined
        ? WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_GAVE_UP
        : f.eventExists
          ? WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_SENDING
          : WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_WAITING;
  const settled = f.deliveredMs ?? f.gaveUpMs;
  return WebhookDelivery.fromPartial({ state, attempts: f.attempts, lastError: f.lastError, ...(settled !== undefined ? { settledUnixMs: settled } : {}) });
}
