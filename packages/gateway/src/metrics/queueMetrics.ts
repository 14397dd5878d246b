import type { NatsConnection } from "@nats-io/transport-node";
import { gauge, MetricSources } from "@attr-rag/telemetry";
import { readJobQueues, type JobQueues } from "../server/cluster/jobQueues.js";

/** NATS connections of the distributed gateways in this process, whose job queues /metrics reports. */
export const queueConnections = new MetricSources<NatsConnection>(registerQueueGauges);

// One JetStream read serves the four gauges of a scrape (they are collected one after another).
let last: { at: number; value: Promise<JobQueues | undefined> } | undefined;
function read(): Promise<JobQueues | undefined> {
  const nc = queueConnections.items[0];
  if (nc === undefined) return Promise.resolve(undefined);
  if (last === undefined || Date.now() - last.at > 1_000) last = { at: Date.now(), value: readJobQueues(nc).catch(() => undefined) };
  return last.value;
}

const perConsumer = (name: string, help: string, field: "pending" | "ackPending" | "redelivered") =>
  gauge({
    name,
    help,
    labelNames: ["consumer"],
    async collect() {
      const q = await read();
      this.reset();
      for (const c of q?.queues ?? []) this.set({ consumer: c.consumer }, c[field]);
    },
  });

function registerQueueGauges(): void {
  perConsumer("attr_rag_job_queue_pending", "Engine jobs waiting for a worker, per consumer of the jobs stream (model and lane); JetStream's num_pending, as GetCluster shows it.", "pending");
  perConsumer("attr_rag_job_queue_ack_pending", "Engine jobs a worker holds and has not acknowledged (in flight), per consumer; JetStream's num_ack_pending.", "ackPending");
  perConsumer("attr_rag_job_queue_redelivered", "Engine jobs delivered more than once (a worker died or stalled with them), per consumer; JetStream's num_redelivered.", "redelivered");

  gauge({
    name: "attr_rag_dead_letters",
    help: "Engine jobs given up after their last delivery, kept in the dead-letter stream (GetCluster's dead_letters).",
    async collect() {
      const q = await read();
      this.set(q?.deadLetters ?? 0);
    },
  });
}
