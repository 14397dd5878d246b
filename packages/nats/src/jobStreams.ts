// The JetStream side of the distributed mode in one place: the work queue of engine jobs, the dead-letter
// stream, and the durable pull consumer the workers of one model share. Idempotent: every role may call it.
import { AckPolicy, DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, type ConsumerConfig, type JetStreamManager } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { DEAD_LETTER_STREAM, DEAD_LETTER_STREAM_SUBJECTS, JOBS_STREAM, JOBS_STREAM_SUBJECTS, workerConsumer, workerFilterSubject, type JobLane } from "@attr-rag/contracts";

export interface JobQueueSettings {
  /** How long a worker may hold a job without acking or saying it is working before it is redelivered. */
  readonly ackWaitMs: number;
  /** Deliveries before a job is given up (then it goes to the dead letters). */
  readonly maxDeliver: number;
  /** Window in which a second publish of the same job id is dropped. */
  readonly duplicateWindowMs: number;
}

export const DEFAULT_JOB_QUEUE: JobQueueSettings = { ackWaitMs: 30_000, maxDeliver: 3, duplicateWindowMs: 120_000 };

/** Creates (or keeps) the jobs work queue and the dead-letter stream, both on disk. */
export async function ensureJobStreams(jsm: JetStreamManager, settings: JobQueueSettings = DEFAULT_JOB_QUEUE): Promise<void> {
  await ensureStream(jsm, {
    name: JOBS_STREAM,
    subjects: [...JOBS_STREAM_SUBJECTS],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    duplicate_window: nanos(settings.duplicateWindowMs),
  });
  await ensureStream(jsm, {
    name: DEAD_LETTER_STREAM,
    subjects: [...DEAD_LETTER_STREAM_SUBJECTS],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.Old,
    max_age: nanos(7 * 24 * 3600 * 1000),
  });
}

/** Creates the stream unless it exists (another process may create it at the same moment). */
export async function ensureStream(jsm: JetStreamManager, config: Parameters<JetStreamManager["streams"]["add"]>[0]): Promise<void> {
  try {
    await jsm.streams.info(config.name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    try {
      await jsm.streams.add(config);
    } catch (addErr) {
      // Another process created it between our info and add.
      if (!/already in use|exists/i.test((addErr as Error).message)) throw addErr;
    }
  }
}

/** The consumer of one model's jobs in one lane (created on first use, its settings kept up to date). */
export function workerConsumerConfig(model: string, settings: JobQueueSettings = DEFAULT_JOB_QUEUE, lane: JobLane = "interactive"): Partial<ConsumerConfig> & { durable_name: string } {
  return {
    durable_name: workerConsumer(model, lane),
    filter_subject: workerFilterSubject(model, lane),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(settings.ackWaitMs),
    max_deliver: settings.maxDeliver,
    // Each worker pulls one job at a time per slot; many pending acks would only hide jobs from idle workers.
    max_ack_pending: 1_000,
  };
}

export async function ensureWorkerConsumer(jsm: JetStreamManager, model: string, settings: JobQueueSettings = DEFAULT_JOB_QUEUE, lane: JobLane = "interactive"): Promise<void> {
  await ensureDurableConsumer(jsm, JOBS_STREAM, workerConsumerConfig(model, settings, lane));
}

/** Creates a durable consumer, or brings an existing one's ack_wait and max_deliver up to date. */
export async function ensureDurableConsumer(jsm: JetStreamManager, stream: string, config: Partial<ConsumerConfig> & { durable_name: string }): Promise<void> {
  try {
    await jsm.consumers.info(stream, config.durable_name);
    await jsm.consumers.update(stream, config.durable_name, { ack_wait: config.ack_wait!, max_deliver: config.max_deliver! });
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await jsm.consumers.add(stream, config).catch((addErr: unknown) => {
      // Another process created it between our info and add.
      if (!/already in use|exists/i.test((addErr as Error).message)) throw addErr;
    });
  }
}

function isNotFound(err: unknown): boolean {
  return /not found/i.test((err as Error)?.message ?? "");
}
