import type { Consumer, JetStreamClient, JsMsg } from "@nats-io/jetstream";
import { WEBHOOK_SENDERS_CONSUMER, WEBHOOKS_STREAM, WebhookEventRecord, webhookEventSubject } from "@attr-rag/contracts";
import type { WebhookEvent } from "../webhooks/webhookOutbox.js";

/**
 * Queues a batch's ended event. The event id is the message id: two gateways that both see the batch end
 * publish it once between them (JetStream drops the second within the stream's duplicate window). False when
 * it was such a repeat.
 */
export async function publishWebhookEvent(js: JetStreamClient, event: Omit<WebhookEvent, "attempts">): Promise<boolean> {
  const record = WebhookEventRecord.fromPartial({ id: event.id, batchId: event.batchId, url: event.url, body: event.body, createdUnixMs: event.createdMs });
  const ack = await js.publish(webhookEventSubject(event.batchId), WebhookEventRecord.encode(record).finish(), { msgID: event.id });
  return !ack.duplicate;
}

/** How long one look for an event waits. */
const FETCH_EXPIRES_MS = 2_000;

/** A webhook event this gateway holds: nobody else delivers it until it is settled or this gateway dies. */
export interface ClaimedWebhook {
  readonly event: WebhookEvent;
  /** Still working on it (a slow receiver): keeps it from being handed to another gateway. */
  working(): void;
  /** Delivered or given up: it leaves the queue. */
  done(): Promise<void>;
  /** Failed: handed out again (to any gateway) after `delayMs`. */
  retry(delayMs: number): void;
  /**
   * Given back by a gateway that stops: handed out again once this gateway's last look has expired (the server
   * may still hand a message to a look whose gateway has stopped reading; it would then wait for ack_wait).
   */
  release(): void;
}

/**
 * The senders' side in distributed mode: every gateway with a signing secret pulls events from one durable
 * consumer of the ATTR_RAG_WEBHOOKS work queue, so each event is with one gateway at a time; a gateway that
 * dies holding one leaves it unacknowledged, and after ack_wait another gateway gets it.
 */
export class WebhookQueue {
  #consumer: Consumer | undefined;

  constructor(
    private readonly js: JetStreamClient,
    private readonly log: (line: string) => void,
  ) {}

  /** The next event, or undefined when none came within a couple of seconds (or `signal` aborted). */
  async next(signal: AbortSignal): Promise<ClaimedWebhook | undefined> {
    this.#consumer ??= await this.js.consumers.get(WEBHOOKS_STREAM, WEBHOOK_SENDERS_CONSUMER);
    const messages = await this.#consumer.fetch({ max_messages: 1, expires: FETCH_EXPIRES_MS });
    const stop = () => void messages.close();
    signal.addEventListener("abort", stop, { once: true });
    let m: JsMsg | undefined;
    try {
      for await (const got of messages) {
        m = got;
        break;
      }
    } finally {
      signal.removeEventListener("abort", stop);
    }
    if (m === undefined) return undefined;
    let record: WebhookEventRecord;
    try {
      record = WebhookEventRecord.decode(m.data);
    } catch (err) {
      this.log(`webhooks: ${m.subject} #${m.seq} is not a WebhookEventRecord (${(err as Error).message}); dropped`);
      m.term();
      return undefined;
    }
    const msg = m;
    return {
      // Attempts so far: JetStream counts the deliveries, this one included.
      event: { id: record.id, batchId: record.batchId, url: record.url, body: record.body, createdMs: Number(record.createdUnixMs), attempts: msg.info.deliveryCount - 1 },
      working: () => msg.working(),
      done: async () => {
        await msg.ackAck().catch(() => false);
      },
      retry: (delayMs) => msg.nak(delayMs),
      release: () => msg.nak(FETCH_EXPIRES_MS + 500),
    };
  }
}
