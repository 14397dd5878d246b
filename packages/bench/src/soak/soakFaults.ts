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
}

export async function applyFaults(cluster: LocalCluster, faults: readonly Fault[], history: SoakHistoryLog, say: (line: string) => void): Promise<AppliedFault[]> {
  const applied: AppliedFault[] = [];
  await Promise.all(
    faults.map(async (f) => {
      await sleep(f.atMs - history.now());
      const record: AppliedFault = { id: f.id, kind: f.kind, target: f.target, atMs: history.now(), durationMs: f.durationMs };
      applied.push(record);
      try {
        await apply(cluster, f, say);
      } catch (err) {
        record.error = (err as Error).message.split("\n")[0];
        say(`fault ${f.id} (${f.kind} ${f.target}): ${record.error}`);
      }
    }),
  );
  return applied.sort((a, b) => a.id - b.id);
}

async function apply(cluster: LocalCluster, f: Fault, say: (line: string) => void): Promise<void> {
  if (f.kind === "nats-restart") {
    say(`fault ${f.id}: nats-server killed for ${f.durationMs} ms`);
    await cluster.nats.kill();
    await sleep(f.durationMs);
    await cluster.nats.restart();
    return;
  }
  const p = cluster.processes.find((q) => q.name === f.target && q.running);
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
  await cluster.restart(p);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
