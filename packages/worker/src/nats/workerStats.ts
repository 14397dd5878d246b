import { WorkerStats } from "@attr-rag/contracts";
import type { NatsConnection } from "@attr-rag/nats";

/**
 * Every worker's stats, from the data of `$SRV.STATS.attr-rag-worker` (each worker answers for itself), within
 * `maxWaitMs`. Workers that do not answer in time are left out; none answering is an empty list.
 */
export async function listWorkerStats(nc: NatsConnection, maxWaitMs = 500): Promise<WorkerStats[]> {
  const all: WorkerStats[] = [];
  for await (const stats of workerAnswers(nc, maxWaitMs)) all.push(stats);
  return all;
}

/**
 * Whether some worker serves `modelId`: true as soon as one says so (no wait for the others), false after
 * `maxWaitMs` without one.
 */
export async function someWorkerServes(nc: NatsConnection, modelId: string, maxWaitMs = 500): Promise<boolean> {
  for await (const stats of workerAnswers(nc, maxWaitMs)) if (stats.model === modelId) return true;
  return false;
}

async function* workerAnswers(nc: NatsConnection, maxWaitMs: number): AsyncGenerator<WorkerStats> {
  for await (const m of await nc.requestMany("$SRV.STATS.attr-rag-worker", undefined, { maxWait: maxWaitMs })) {
    const data = (m.json() as { endpoints?: { data?: unknown }[] }).endpoints?.[0]?.data;
    if (data !== undefined && data !== null) yield WorkerStats.fromJSON(data);
  }
}
