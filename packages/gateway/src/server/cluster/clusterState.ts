import type { GetClusterResponse, JobQueue } from "@attr-rag/contracts";
import { engineWorkerStats, listWorkerStats, modelIdOf } from "@attr-rag/worker";
import type { Runtime } from "../../runtime/Runtime.js";
import type { Admission } from "../admission.js";
import { readJobQueues } from "./jobQueues.js";
import { withoutCredentials } from "@attr-rag/telemetry";
import { listIndexReplicas } from "@attr-rag/index";

/**
 * What ClusterService.GetCluster answers. Embedded: the gateway's own engine context, as one worker.
 * Distributed: the workers that answer $SRV.STATS within half a second, every consumer of the jobs stream
 * (one per model and lane) and the dead-letter count, read from JetStream, and the replicas of a replicated
 * index that answer within half a second, serving or behind.
 */
export async function clusterState(runtime: Runtime, admission: Admission): Promise<GetClusterResponse> {
  const base = { asksRunning: admission.running, asksQueued: admission.queued, queues: [] as JobQueue[], deadLetters: 0, indexReplicas: [] };
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
  // Asked together: each waits up to half a second for the answers of processes that may be slow or gone.
  const [workers, indexReplicas] = await Promise.all([listWorkerStats(nc).then((w) => w.sort((a, b) => a.workerId.localeCompare(b.workerId))), listIndexReplicas(nc)]);
  return { ...base, mode: "distributed", nats: withoutCredentials(runtime.config.nats ?? ""), workers, queues, deadLetters, indexReplicas };
}

/** The model's id as workers report theirs (the file name without .gguf), else the configured value as is. */
function modelId(model: string): string {
  try {
    return modelIdOf(model);
  } catch {
    return model;
  }
}
