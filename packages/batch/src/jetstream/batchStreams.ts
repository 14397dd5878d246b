// Where batches live in distributed mode, in one place (docs/batches.md, "Durable, in both modes"): the items work queue every gateway's
// runner pulls from, the results stream (one subject per item, written once), the records bucket, the kept
// advisories of items that ran out of deliveries, the webhook events waiting to be delivered. Idempotent:
// every gateway calls it at start.
import { AckPolicy, DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, type JetStreamManager } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { nanos, type NatsConnection } from "@nats-io/transport-node";
import { ensureDurableConsumer, ensureStream } from "@attr-rag/nats";
import {
  BATCH_BUCKET,
  BATCH_DEAD_ITEMS_CONSUMER,
  BATCH_DEAD_ITEMS_STREAM,
  BATCH_DEAD_ITEMS_STREAM_SUBJECTS,
  BATCH_ITEMS_STREAM,
  BATCH_ITEMS_STREAM_SUBJECTS,
  BATCH_RESULTS_STREAM,
  BATCH_RESULTS_STREAM_SUBJECTS,
  BATCH_RUNNERS_CONSUMER,
  WEBHOOK_SENDERS_CONSUMER,
  WEBHOOKS_STREAM,
  WEBHOOKS_STREAM_SUBJECTS,
} from "@attr-rag/contracts";

export interface BatchQueueSettings {
  /** How long a runner may hold an item without saying it is still working before another runner gets it. */
  readonly ackWaitMs: number;
  /** Deliveries of an item before it fails for good (its result says so). */
  readonly maxDeliver: number;
  /** How long batches (records and results) are kept after their last change. */
  readonly retentionMs: number;
}

export const DEFAULT_BATCH_QUEUE: BatchQueueSettings = { ackWaitMs: 30_000, maxDeliver: 10, retentionMs: 30 * 24 * 3600 * 1000 };

/**
 * How long results are kept: twice as long as records, so that a result outlives its batch's record. A
 * record's time counts from its last write, and that comes after the batch's first result by as much as the
 * batch's run plus its webhook's retries (webhookRetryFor, at most 30 days). A result expiring first would move
 * every later one up: a download resumed from an earlier one (`curl -C -`, ListBatchResults from an offset)
 * would splice two files silently. Only a batch that ran, with its webhook's retries, for longer than the
 * retention itself can lose results before its record (results.jsonl refuses with 410 a batch whose counts
 * still include results that are gone; counts read back from this stream after the loss cannot show it).
 */
export function resultsMaxAgeMs(settings: BatchQueueSettings): number {
  return 2 * settings.retentionMs;
}

/** Re-sending a CreateBatch within this window never queues an item twice (JetStream de-duplicates by message id). */
const ITEMS_DUPLICATE_WINDOW_MS = 3600 * 1000;

/** Gateways that see a batch end queue its event at once; a repeat within this window is dropped by its id. */
const WEBHOOKS_DUPLICATE_WINDOW_MS = 3600 * 1000;

export async function ensureBatchStreams(nc: NatsConnection, jsm: JetStreamManager, settings: BatchQueueSettings): Promise<KV> {
  await ensureStream(jsm, {
    name: BATCH_ITEMS_STREAM,
    subjects: [...BATCH_ITEMS_STREAM_SUBJECTS],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    duplicate_window: nanos(ITEMS_DUPLICATE_WINDOW_MS),
  });
  await ensureStream(jsm, {
    name: BATCH_RESULTS_STREAM,
    subjects: [...BATCH_RESULTS_STREAM_SUBJECTS],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: nanos(resultsMaxAgeMs(settings)),
    // Each item's subject holds its one result; the publish also says "only if it has none" (see publishResult).
    max_msgs_per_subject: 1,
  });
  // A results stream made by an earlier release kept results only as long as records: lengthened, never shortened.
  const results = await jsm.streams.info(BATCH_RESULTS_STREAM);
  if (results.config.max_age !== 0 && results.config.max_age < nanos(resultsMaxAgeMs(settings))) {
    await jsm.streams.update(BATCH_RESULTS_STREAM, { max_age: nanos(resultsMaxAgeMs(settings)) });
  }
  await ensureDurableConsumer(jsm, BATCH_ITEMS_STREAM, {
    durable_name: BATCH_RUNNERS_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(settings.ackWaitMs),
    max_deliver: settings.maxDeliver,
    max_ack_pending: 10_000,
  });
  // Created before any runner pulls: JetStream publishes an advisory once, and only a stream keeps it.
  await ensureStream(jsm, {
    name: BATCH_DEAD_ITEMS_STREAM,
    subjects: [...BATCH_DEAD_ITEMS_STREAM_SUBJECTS],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: nanos(settings.retentionMs),
  });
  // Each advisory goes to one gateway at a time and stays until it is handled (ItemDeadLetters).
  await ensureDurableConsumer(jsm, BATCH_DEAD_ITEMS_STREAM, {
    durable_name: BATCH_DEAD_ITEMS_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(30_000),
    max_deliver: -1,
  });
  // A batch's ended event, queued once (its id is the message id) and delivered by one gateway at a time; the
  // senders nak a failed delivery with their backoff and acknowledge it once delivered or given up.
  await ensureStream(jsm, {
    name: WEBHOOKS_STREAM,
    subjects: [...WEBHOOKS_STREAM_SUBJECTS],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    duplicate_window: nanos(WEBHOOKS_DUPLICATE_WINDOW_MS),
    max_age: nanos(settings.retentionMs),
  });
  await ensureDurableConsumer(jsm, WEBHOOKS_STREAM, {
    durable_name: WEBHOOK_SENDERS_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(settings.ackWaitMs),
    // Retries are bounded by time (webhookRetryFor), which the senders keep, not by a count.
    max_deliver: -1,
  });
  return new Kvm(nc).create(BATCH_BUCKET, { history: 1, storage: StorageType.File, ttl: settings.retentionMs, allow_direct: false });
}
