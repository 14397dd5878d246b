import { gauge, histogram, MetricSources, SECONDS_BUCKETS } from "@attr-rag/telemetry";
import type { Admission } from "../server/admission.js";

/** The admission queues of the gateways in this process (one, outside tests). */
export const admissions = new MetricSources<Admission>(registerAdmissionGauges);

const queueSeconds = () =>
  histogram({
    name: "attr_rag_ask_queue_seconds",
    help: "Time an Ask or Attribute waited for an admission slot (0 when one was free).",
    labelNames: ["rpc"],
    buckets: SECONDS_BUCKETS,
  });

export function observeQueueTime(rpc: string, seconds: number): void {
  queueSeconds().observe({ rpc }, seconds);
}

function registerAdmissionGauges(): void {
  gauge({
    name: "attr_rag_asks_running",
    help: "Asks and Attributes holding an admission slot now (the same figure as GetCluster's asks_running).",
    collect() {
      this.set(admissions.items.reduce((n, a) => n + a.running, 0));
    },
  });

  gauge({
    name: "attr_rag_asks_waiting",
    help: "Asks and Attributes waiting for an admission slot now (GetCluster's asks_queued).",
    collect() {
      this.set(admissions.items.reduce((n, a) => n + a.queued, 0));
    },
  });

  gauge({
    name: "attr_rag_asks_slots",
    help: "Admission slots (maxConcurrentAsks) of the gateways in this process.",
    collect() {
      this.set(admissions.items.reduce((n, a) => n + a.maxRunning, 0));
    },
  });
}
