// Which worker did the engine jobs of a measured run, read from the workers' logs. The run's Asks carry
// request ids with one prefix, so warm-up jobs never count, whenever their log lines arrive: a worker
// publishes a job's result before it logs "finished", and its stderr reaches us through a pipe while the
// answer comes through NATS and the gateway, so a count taken when the last answer arrives can miss lines
// or pick up the warm-up's late ones.
import type { ClusterProcess } from "./clusterProcess.js";

const RUNNING = /running (?:occlusion|generation|likelihood) job ([^\s"]+) \(attempt \d+, request ([^)\s"]+)\)/g;
const FINISHED = /finished (?:occlusion|generation|likelihood) job ([^\s"]+)/g;

/** Ids of the jobs any of these workers started for requests whose id starts with `prefix`. */
function startedFor(workers: readonly ClusterProcess[], prefix: string): Set<string> {
  const ids = new Set<string>();
  for (const w of workers) for (const m of w.stderr.matchAll(RUNNING)) if (m[2]!.startsWith(prefix)) ids.add(m[1]!);
  return ids;
}

/** Per worker, how many of `jobs` it finished (a redelivered job finished twice counts for both workers). */
function finishedOf(workers: readonly ClusterProcess[], jobs: ReadonlySet<string>): number[] {
  return workers.map((w) => new Set([...w.stderr.matchAll(FINISHED)].map((m) => m[1]!).filter((id) => jobs.has(id))).size);
}

/**
 * Jobs each worker finished for the requests with this id prefix, once every such job that was started has
 * its "finished" line (or after `waitMs`, with whatever has arrived by then).
 */
export async function jobsPerWorker(workers: readonly ClusterProcess[], prefix: string, waitMs = 10_000): Promise<number[]> {
  const until = Date.now() + waitMs;
  for (;;) {
    const started = startedFor(workers, prefix);
    const finished = finishedOf(workers, started);
    const done = new Set(workers.flatMap((w) => [...w.stderr.matchAll(FINISHED)].map((m) => m[1]!)));
    if ([...started].every((id) => done.has(id)) || Date.now() >= until) return finished;
    await new Promise((r) => setTimeout(r, 50));
  }
}
