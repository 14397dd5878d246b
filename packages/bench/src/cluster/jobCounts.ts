// Which worker did the engine jobs of a measured run, read from the workers' logs. The run's Asks carry
// request ids with one prefix, so warm-up jobs never count, whenever their log lines arrive: a worker
// publishes a job's result before it logs "finished", and its stderr reaches us through a pipe while the
// answer comes through NATS and the gateway, so a count taken when the last answer arrives can miss lines
// or pick up the warm-up's late ones.
import { setTimeout as sleep } from "node:timers/promises";
import type { ClusterProcess } from "@attr-rag/cluster";

const RUNNING = /running (?:occlusion|generation|likelihood) job ([^\s"]+) \(attempt \d+, request ([^)\s"]+)\)/g;
const FINISHED = /finished (?:occlusion|generation|likelihood) job ([^\s"]+)/g;

/** Ids of the jobs any of these workers started for requests whose id starts with `prefix`. */
function startedFor(workers: readonly ClusterProcess[], prefix: string): Set<string> {
  const ids = new Set<string>();
  for (const w of workers) for (const m of w.stderr.matchAll(RUNNING)) if (m[2]!.startsWith(prefix)) ids.add(m[1]!);
  return ids;
}

/**
 * Jobs each worker finished for the requests with this id prefix (a redelivered job finished twice counts
 * for both workers), once every such job that was started has its "finished" line (or after `waitMs`,
 * with whatever has arrived by then).
 */
export async function jobsPerWorker(workers: readonly ClusterProcess[], prefix: string, waitMs = 10_000): Promise<number[]> {
  const until = Date.now() + waitMs;
  for (;;) {
    const started = startedFor(workers, prefix);
    const finished = workers.map((w) => new Set([...w.stderr.matchAll(FINISHED)].map((m) => m[1]!).filter((id) => started.has(id))));
    if ([...started].every((id) => finished.some((ids) => ids.has(id))) || Date.now() >= until) return finished.map((ids) => ids.size);
    await sleep(50);
  }
}
