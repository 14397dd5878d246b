import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("./crashChild.mjs", import.meta.url));

export type CrashOp = { op: "upsert"; id: string; version: number } | { op: "delete"; id: string };
export interface CrashPlan {
  readonly store: string;
  readonly round: number;
  readonly saveEvery: number;
  readonly script?: readonly CrashOp[];
}

export interface CrashOutcome {
  /** Writes the child reported as acknowledged, in order. */
  readonly acked: CrashOp[];
  /** A write that had begun but was not acknowledged when the child died (it may or may not be visible). */
  readonly inFlight: CrashOp | undefined;
}

/**
 * Runs the child on `plan` and kills it with SIGKILL right after its `killAfterAcks`-th acknowledgement
 * (or, for a scripted plan, once it reports "done"). Resolves after the child has exited and been reaped.
 */
export function runCrashChild(plan: CrashPlan, killAfterAcks: number): Promise<CrashOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, JSON.stringify(plan)], { stdio: ["ignore", "pipe", "pipe"] });
    const acked: CrashOp[] = [];
    let inFlight: CrashOp | undefined;
    let killed = false;
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const kill = () => {
      if (killed) return;
      killed = true;
      child.kill("SIGKILL");
    };
    createInterface({ input: child.stdout }).on("line", (line) => {
      // Lines read after the kill still count: the child wrote an ack only after the write resolved.
      const event = JSON.parse(line) as { event: string } & CrashOp;
      const { event: kind, ...rest } = event;
      const op = rest as CrashOp & { status?: string };
      if (kind === "begin") inFlight = stripStatus(op);
      if (kind === "ack") {
        acked.push(stripStatus(op));
        inFlight = undefined;
        if (acked.length >= killAfterAcks) kill();
      }
      if (kind === "done") kill();
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (signal === "SIGKILL" && killed) resolve({ acked, inFlight });
      else reject(new Error(`crash child exited on its own (code ${code}, signal ${signal}) after ${acked.length} acks:\n${stderr}`));
    });
  });
}

function stripStatus(op: CrashOp & { status?: string }): CrashOp {
  return op.op === "upsert" ? { op: "upsert", id: op.id, version: op.version } : { op: "delete", id: op.id };
}
