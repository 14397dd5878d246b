import type { WorkerStats } from "@attr-rag/contracts";
import type { EngineContext } from "@attr-rag/engine";

/** Who is reporting and how busy it is: the part of WorkerStats the engine cannot know. */
export type WorkerIdentity = Pick<WorkerStats, "workerId" | "model" | "slots" | "runningJobs" | "completedJobs">;

/**
 * WorkerStats for one engine context: its KV and scheduler counters beside `identity`. Shared by `attr-rag
 * worker` ($SRV.STATS) and an embedded gateway's ClusterService, so both report the same fields the same way.
 */
export function engineWorkerStats(engine: EngineContext, identity: WorkerIdentity): WorkerStats {
  const s = engine.disposed ? undefined : engine.schedulerStats();
  return {
    ...identity,
    sequencesInUse: engine.disposed ? 0 : engine.sequencesInUse(),
    decodeCalls: s?.decodeCalls ?? 0,
    decodeRows: s?.rows ?? 0,
    meanRowsPerCall: s?.meanRowsPerCall ?? 0,
    multiJobCalls: s?.multiJobCalls ?? 0,
    jobsAdmitted: s?.jobsAdmitted ?? 0,
    jobsWaited: s?.jobsWaited ?? 0,
    waitingJobs: s?.waitingJobs ?? 0,
    sequencesReserved: s?.sequencesReserved ?? 0,
    cellsReserved: s?.cellsReserved ?? 0,
    sequences: s?.sequences ?? 0,
    cells: s?.cells ?? 0,
  };
}
