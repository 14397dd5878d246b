// Webhook events waiting to be delivered: written in the same transaction that ends their batch, so an event
// outlives a gateway killed between the batch ending and the POST.
export interface WebhookEvent {
  readonly id: string;
  readonly batchId: string;
  readonly url: string;
  /** The exact body to POST. */
  readonly body: string;
  readonly createdMs: number;
  readonly attempts: number;
}

export interface WebhookOutbox {
  /** Events not delivered or given up whose next attempt is due at `nowMs`, oldest first. */
  dueWebhooks(nowMs: number, limit: number): WebhookEvent[];
  /** The delivery was answered 2xx. */
  webhookDelivered(id: string, nowMs: number): void;
  /** It failed (`error` says how); try again at `nextMs`. */
  webhookRetry(id: string, attempts: number, nextMs: number, error: string): void;
  /** No more attempts (the retry time is over, or the target is refused). */
  webhookGaveUp(id: string, attempts: number, nowMs: number, error: string): void;
}
