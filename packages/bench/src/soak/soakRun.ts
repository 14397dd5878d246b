// `attr-rag soak`: a local cluster with the deploy configuration's per-role users (nats-server, 2 gateways, an
// index of 2 shards × 2 replicas, 2 workers, the selector) under the seeded mixed load of soakWorkload.ts while
// the seeded fault schedule (core's faultSchedule) kills, pauses and restarts its processes and nats-server.
// Then a recovery window with faults off, the observations, and core's checkHistory over it all. The seed
// reproduces the load and the schedule (not the interleaving, which the machine decides).
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkHistory, faultsByKind, faultSchedule, shardOf, type FaultKind, type SoakHistory, type Violation } from "@attr-rag/core";
import { LocalCluster } from "@attr-rag/cluster";
import { defaultModelPath } from "@attr-rag/engine";
import { freePort } from "../freePort.js";
import { describeRun, type BenchRun } from "../record/runRecord.js";
import { SoakClients } from "./soakClients.js";
import { applyFaults, type AppliedFault } from "./soakFaults.js";
import { SoakHistoryLog } from "./soakHistoryLog.js";
import { observeBatches, observeReplicas, sampleRss } from "./soakObserve.js";
import { WebhookSink } from "./webhookSink.js";
import { runWorkload } from "./soakWorkload.js";

export interface SoakOptions {
  readonly seed: number;
  /** Minutes of load with faults; the recovery window comes after. */
  readonly minutes: number;
  readonly faultsPerMinute: number;
  /** Default: the shipped stories260K (or ATTR_RAG_MODEL). */
  readonly modelPath?: string;
  /** The corpus the Asks retrieve from (ingested through the log before the load starts); default the demo corpus. */
  readonly corpus?: string;
  /** Longest wait, after the load, for batches to end and webhooks to settle. Default 120 s. */
  readonly recoveryMs?: number;
  /** Fault kinds to draw; default all. */
  readonly kinds?: readonly FaultKind[];
  /** A defect switched on in every process (ATTR_RAG_SOAK_DEFECT), to see the checker catch it. */
  readonly defect?: string;
  readonly onProgress?: (line: string) => void;
}

export interface SoakReport {
  soak: { seed: number; minutes: number; faults_per_minute: number; recovery_ms: number; defect: string | null };
  operations: Record<string, Record<string, number>>;
  /** started_again: restarts that took more than one start (the process exited on its own while starting). */
  faults: { scheduled: number; applied: number; by_kind: Record<string, number>; errors: string[]; started_again: string[] };
  violations: Violation[];
  history: SoakHistory;
  run: BenchRun;
}

const DEMO_CORPUS = fileURLToPath(new URL("../../../../examples/demo-corpus/corpus.jsonl", import.meta.url));
const SHARDS = 2;
const REPLICAS = 2;
const WEBHOOK_RETRY_FOR_S = 60;

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const say = o.onProgress ?? (() => {});
  // Recorded before the load, so the commit is the one that ran even if the tree changes during an hour's run.
  const run = describeRun();
  const recoveryMs = o.recoveryMs ?? 120_000;
  const root = mkdtempSync(join(tmpdir(), "attr-rag-soak-"));
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  const history = new SoakHistoryLog();
  const startEpochMs = Date.now() - history.now();
  const sink = await WebhookSink.start({ secret, seed: o.seed, refuseShare: 0.15, stallShare: 0.05, stallMs: 4_000, now: () => history.now() });
  say(`starting the cluster (2 gateways, 2 shards x 2 replicas, 2 workers, the selector) in ${root}`);
  const cluster = await LocalCluster.start({
    store: root,
    indexShards: SHARDS,
    indexReplicas: REPLICAS,
    workers: 2,
    gateways: 0,
    modelPath: o.modelPath ?? defaultModelPath(),
    workerArgs: ["--threads", "1", "--context-size", "4096"],
    ackWaitSeconds: 10,
    gatewayArgs: [
      "--webhook-secret", secret, "--webhook-allowed-hosts", "127.0.0.1", "--webhook-retry-for", String(WEBHOOK_RETRY_FOR_S),
      "--webhook-backoff-ms", "500", "--webhook-attempt-timeout-ms", "2000", "--k", "3", "--max-tokens", "8",
    ],
    env: { ATTR_RAG_THREADS: "1", ...(o.defect !== undefined ? { ATTR_RAG_SOAK_DEFECT: o.defect } : {}) },
  });
  const gateways: SoakClients[] = [];
  try {
    // Fixed ports, so a restarted gateway is found where its clients look.
    for (let i = 0; i < 2; i++) {
      const [port, http] = [await freePort(), await freePort()];
      const address = await cluster.addGateway(port, 120_000, ["--http-port", String(http)]);
      gateways.push(new SoakClients(address, `127.0.0.1:${http}`));
    }
    const corpus = o.corpus ?? DEMO_CORPUS;
    say(`ingesting ${corpus} through the log`);
    await cluster.ingestThroughLog(corpus);

    const windowMs = o.minutes * 60_000;
    const targets = cluster.processes.map((p) => p.name);
    const schedule = faultSchedule({ seed: o.seed, faultWindowMs: windowMs, faultsPerMinute: o.faultsPerMinute, targets, ...(o.kinds !== undefined ? { kinds: o.kinds } : {}) });
    say(`load for ${o.minutes} min with ${schedule.length} faults (seed ${o.seed}), then up to ${recoveryMs / 1000} s of recovery`);
    const offset = history.now();
    const shifted = schedule.map((f) => ({ ...f, atMs: f.atMs + offset }));
    const loadEnds = offset + windowMs;
    const rss: ReturnType<typeof sampleRss> = [];
    const sampler = setInterval(() => rss.push(...sampleRss(cluster, history.now())), 5_000);
    let faults: AppliedFault[];
    try {
      [faults] = await Promise.all([
        applyFaults(cluster, shifted, history, say),
        runWorkload({ seed: o.seed, history, gateways, webhookUrl: sink.url, k: 3, maxTokens: 8, askDeadlineMs: 30_000 }, () => history.now() >= loadEnds),
      ]);
      say(`load over: ${history.operations.length} operations, ${faults.length} faults; recovering`);
      sink.misbehave = false;
      const batchIds = [...new Set(history.operations.filter((op) => op.kind === "batch.create").map((op) => String(op.args.batchId)))];
      const recoverBy = history.now() + recoveryMs;
      let batches = await observeBatches(batchIds, gateways, startEpochMs);
      while (history.now() < recoverBy && batches.some((b) => !["completed", "cancelled", "missing"].includes(b.state) || b.webhookState === "sending" || b.webhookState === "waiting")) {
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        batches = await observeBatches(batchIds, gateways, startEpochMs);
      }
      // Replicas apply the log in order: once a last write per shard, waiting for every replica, is applied
      // everywhere, so is every write before it. A replica that never gets there is what the check then shows.
      await catchUp(gateways, history, recoverBy);
      const observedAtMs = history.now();
      say(`stopping the cluster and reading every replica`);
      clearInterval(sampler);
      for (const g of gateways) g.close();
      await cluster.stop();
      const docIds = [...new Set(history.operations.filter((op) => op.kind === "ingest" || op.kind === "delete").map((op) => String(op.args.docId)))];
      const replicas = await observeReplicas(root, SHARDS, REPLICAS, docIds);
      const full: SoakHistory = {
        seed: o.seed,
        operations: history.operations,
        faults: faults.map(({ id, kind, target, atMs, durationMs }) => ({ id, kind, target, atMs, durationMs })),
        webhooks: sink.deliveries,
        batches,
        replicas,
        shards: SHARDS,
        rss,
        observedAtMs,
        webhookRetryForMs: WEBHOOK_RETRY_FOR_S * 1000,
        webhookSettleMs: recoveryMs,
      };
      const operations: Record<string, Record<string, number>> = {};
      for (const op of history.operations) {
        const byCode = (operations[op.kind] ??= {});
        byCode[op.code ?? "NOT_ENDED"] = (byCode[op.code ?? "NOT_ENDED"] ?? 0) + 1;
      }
      return {
        soak: { seed: o.seed, minutes: o.minutes, faults_per_minute: o.faultsPerMinute, recovery_ms: recoveryMs, defect: o.defect ?? null },
        operations,
        faults: { scheduled: schedule.length, applied: faults.length, by_kind: faultsByKind(schedule), errors: faults.filter((f) => f.error !== undefined).map((f) => `${f.id} ${f.kind} ${f.target}: ${f.error}`), started_again: faults.filter((f) => (f.starts ?? 1) > 1).map((f) => `${f.id} ${f.target}: ${f.starts} starts`) },
        violations: checkHistory(full),
        history: full,
        run,
      };
    } finally {
      clearInterval(sampler);
    }
  } finally {
    for (const g of gateways) g.close();
    await cluster.kill().catch(() => {});
    await sink.close();
    rmSync(root, { recursive: true, force: true });
  }
}

/** One write per shard that waits for all its replicas, sent until it is acknowledged or the recovery ends. */
async function catchUp(gateways: readonly SoakClients[], history: SoakHistoryLog, until: number): Promise<void> {
  for (let shard = 0; shard < SHARDS; shard++) {
    let n = 0;
    while (shardOf(`soak-doc-sentinel-${n}`, SHARDS) !== shard) n++;
    const docId = `soak-doc-sentinel-${n}`;
    for (let attempt = 1; ; attempt++) {
      const version = `${docId} recovery`;
      const op = history.invoke("ingest", { docId, version, waitForReplicas: REPLICAS });
      await history.run(op, async () => {
        const res = await gateways[attempt % gateways.length]!.ingest(docId, version, `Recovery marker of shard ${shard}.`, REPLICAS, `${docId}-${attempt}`, 30_000);
        if (res.failed > 0) throw Object.assign(new Error(res.results[0]?.message ?? "ingest failed"), { code: 13 });
      });
      if (op.code === "OK" || history.now() >= until) break;
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
  }
}
