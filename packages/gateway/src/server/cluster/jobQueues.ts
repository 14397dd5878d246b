import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { DEAD_LETTER_STREAM, JOBS_STREAM, type JobQueue } from "@attr-rag/contracts";

export interface JobQueues {
  readonly queues: JobQueue[];
  readonly deadLetters: number;
}

/**
 * Every consumer of the jobs stream (one per model and lane) and the dead-letter count, as JetStream reports
 * them: what GetCluster answers and what /metrics exports, read the same way.
 */
export async function readJobQueues(nc: NatsConnection): Promise<JobQueues> {
  const jsm = await jetstreamManager(nc);
  const queues: JobQueue[] = [];
  for await (const info of jsm.consumers.list(JOBS_STREAM)) {
    queues.push({
      consumer: info.name,
      filterSubject: info.config.filter_subject ?? "",
      pending: info.num_pending,
      ackPending: info.num_ack_pending,
      redelivered: info.num_redelivered,
    });
  }
  const deadLetters = await jsm.streams
    .info(DEAD_LETTER_STREAM)
    .then((i) => i.state.messages)
    .catch(() => 0);
  return { queues: queues.sort((a, b) => a.consumer.localeCompare(b.consumer)), deadLetters };
}
