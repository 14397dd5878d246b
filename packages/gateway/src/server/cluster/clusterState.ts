import type { GetClusterResponse, JobQueue } from "@attr-rag/contracts";
import { engineWorkerStats, listWorkerStats, modelIdOf } from "@attr-rag/worker";
import type { Runtime } from "../../runtime/Runtime.js";
import type { Admission } from "../admission.js";
import { readJobQueues } from "./jobQueues.js";
import { withoutCredentials } from "@attr-rag/telemetry";

/**
 * What ClusterService.GetCluster answers. Embedded: the gateway's own engine context, as one worker.
 * Distributed: the workers that answer $SRV.STATS within half a second, every consumer of the jobs stream
 * (one per model and lane) and the dead-letter count, read from JetStream.
 */
export async function clusterState(runtime: Runtime, admission: Admission): Promise<GetClusterResponse> {
  const base = { asksRunning: admission.running, asksQueued: admission.queued, queues: [] as JobQueue[], deadLetters: 0 };
  if (runtime.local !== undefined) {
    const engine = runtime.local.generator;
    const s = engine.disposed ? undefined : engine.schedulerStats();
    const identity = {
      workerId: "embedded",
      model: modelId(runtime.config.model),
      slots: runtime.config.maxConcurrentAsks,
      runningJobs: s?.activeJobs ?? 0,
      completedJobs: s === undefined ? 0 : Math.max(0, s.jobsAdmitted - s.activeJobs),
    };
    return { ...base, mode: "embedded", nats: "", workers: [engineWorkerStats(engine, identity)] };
  }
  const nc = runtime.nats!.connection;
  const { queues, deadLetters } = await readJobQueues(nc);
  const workers = (await listWorkerStats(nc)).sort((a, b) => a.workerId.localeCompare(b.workerId));
  return { ...base, mode: "distributed", nats: withoutCredentials(runtime.config.nats ?? ""), workers, queues, deadLetters };
}

/** The model's id as workers report theirs (the file name without .gguf), else the configured value as is. */
function modelId(model: string): string {
  try {
    return modelIdOf(model);
  } catch {
    return model;
  }
}
