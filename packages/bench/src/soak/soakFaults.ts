// Applies a fault schedule to a running local cluster: SIGKILL (restarted after the fault's duration, or much
// later for a late restart), SIGSTOP then SIGCONT, and nats-server killed and started again on its own store.
// Each fault is recorded with when it really began.
import type { Fault } from "@attr-rag/core";
import type { LocalCluster } from "@attr-rag/cluster";
import type { SoakHistoryLog } from "./soakHistoryLog.js";

export interface AppliedFault {
  readonly id: number;
  readonly kind: string;
  readonly target: string;
  readonly atMs: number;
  readonly durationMs: number;
  /** What went wrong applying or undoing it (a restart that did not come up), if anything. */
  error?: string;
  /** Starts the restart took when a process exited on its own while starting (absent: one). */
  starts?: number;
}

export async function applyFaults(cluster: LocalCluster, faults: readonly Fault[], history: SoakHistoryLog, say: (line: string) => void): Promise<AppliedFault[]> {
  const applied: AppliedFault[] = [];
  await Promise.all(
    faults.map(async (f) => {
      await sleep(f.atMs - history.now());
      const record: AppliedFault = { id: f.id, kind: f.kind, target: f.target, atMs: history.now(), durationMs: f.durationMs };
      applied.push(record);
      try {
        await apply(cluster, f, record, say);
      } catch (err) {
        record.error = briefly(err);
        say(`fault ${f.id} (${f.kind} ${f.target}): ${record.error}`);
      }
    }),
  );
  return applied.sort((a, b) => a.id - b.id);
}

async function apply(cluster: LocalCluster, f: Fault, record: AppliedFault, say: (line: string) => void): Promise<void> {
  if (f.kind === "nats-restart") {
    say(`fault ${f.id}: nats-server killed for ${f.durationMs} ms`);
    await cluster.nats.kill();
    await sleep(f.durationMs);
    await cluster.nats.restart();
    return;
  }
  let p = cluster.processes.find((q) => q.name === f.target && q.running);
  if (p === undefined) throw new Error(`no running process ${f.target}`);
  if (f.kind === "pause") {
    say(`fault ${f.id}: ${f.target} paused for ${f.durationMs} ms`);
    p.child.kill("SIGSTOP");
    await sleep(f.durationMs);
    p.child.kill("SIGCONT");
    return;
  }
  say(`fault ${f.id}: ${f.target} killed, restarted after ${f.durationMs} ms`);
  p.child.kill("SIGKILL");
  await p.exited;
  await sleep(f.durationMs);
  // As the deployments' supervisors do (compose's `restart: unless-stopped`, a Kubernetes pod): a process that
  // exits on its own while starting is started again. One killed while starting belongs to the fault that did it.
  for (let start = 1; ; start++) {
    try {
      await cluster.restart(p);
      return;
    } catch (err) {
      const dead = cluster.processes.find((q) => q.name === f.target);
      if (start >= 5 || dead === undefined || dead.running || dead.child.signalCode !== null) throw err;
      record.starts = start + 1;
      say(`fault ${f.id}: ${f.target} exited while starting (${briefly(err)}); starting it again`);
      p = dead;
      await sleep(1_000 * start);
    }
  }
}

/** An error's first line and, for a process that exited while starting, the last line it printed (its reason). */
function briefly(err: unknown): string {
  const lines = (err as Error).message.split("\n").filter((l) => l.trim() !== "");
  return lines.length > 1 ? `${lines[0]} … ${lines.at(-1)!.trim()}` : (lines[0] ?? String(err));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
