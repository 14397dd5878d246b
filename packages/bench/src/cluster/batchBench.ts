// `attr-rag bench batch`: what batches buy a pipeline, measured as a client sees it. The same N items: one
// Ask at a time through an embedded gateway (the baseline a pipeline has without batches), then as one batch
// through clusters of 1, 2, … single-threaded workers. Then, on the largest cluster: how long an interactive
// Ask takes idle and while a batch runs (workers take interactive jobs first), and how a large batch (10,000
// tiny items) is taken in and read back while it runs.
import { randomBytes } from "node:crypto";
import { availableParallelism } from "node:os";
import { AskRequest, BatchState, type Batch, type BatchItem } from "@attr-rag/contracts";
import { RemoteBatches } from "@attr-rag/gateway";
import { BENCH_QUESTIONS, stats, timedAsk, type LatencyStats } from "./clusterBench.js";
import { ClusterProcess } from "@attr-rag/cluster";
import { cpuBetween, cpuSeconds } from "./processCpu.js";
import { jobsPerWorker } from "./jobCounts.js";
import { LocalCluster } from "@attr-rag/cluster";

export interface BatchBenchOptions {
  readonly store: string;
  readonly modelPath: string;
  readonly workerCounts: readonly number[];
  readonly items: number;
  readonly k: number;
  readonly maxTokens: number;
  readonly threads: number;
  readonly contextSize: number;
  /** Interactive Asks timed idle and during a batch (0: skip). */
  readonly interactive: number;
  /** Items of the large batch (0: skip). */
  readonly large: number;
  readonly onProgress?: (line: string) => void;
}

export interface BatchRun {
  workers: number;
  items: number;
  wall_ms: number;
  items_per_minute: number;
  succeeded: number;
  jobs_per_worker: number[];
  /**
   * CPU seconds each process of the cluster used during the batch (from /proc; empty without it), beside
   * what the machine's cores offered in that time: where a speedup falls short, this shows who took the cores.
   */
  cpu_s: Record<string, number>;
  cores_s: number;
}

export interface BatchBenchReport {
  bench: "batch";
  model: string;
  settings: { k: number; max_tokens: number; threads_per_worker: number; context_size: number; items: number; interactive: number; large: number };
  embedded_one_by_one: { items: number; wall_ms: number; items_per_minute: number };
  batches: BatchRun[];
  /** items/minute with N workers ÷ with 1 worker. */
  speedup: Record<string, number>;
  /** The 1-worker cluster's batch items/minute ÷ the embedded one-by-one items/minute. */
  cluster_vs_embedded: number | null;
  interactive: { workers: number; batch_items: number; idle: LatencyStats; during_batch: LatencyStats; ratio: number } | null;
  large:
    | { workers: number; items: number; request_bytes: number; submit_ms: number; status: LatencyStats & { p95_ms: number; reads: number; finished_at_end: number }; results_read: { results: number; ms: number }; cancel_to_end_ms: number }
    | null;
  goals: { speedup_2_workers: number; cluster_vs_embedded: number; interactive_ratio: number };
}

const items = (n: number, prefix: string, extra: Partial<AskRequest> = {}): BatchItem[] =>
  Array.from({ length: n }, (_, i) => ({ itemId: `${prefix}-${i}`, request: AskRequest.fromPartial({ question: BENCH_QUESTIONS[i % BENCH_QUESTIONS.length]!, requestId: `${prefix}-${i}`, ...extra }) }));

/** CPU seconds so far of every process of a cluster, nats-server included, by name. */
const clusterCpu = (cluster: LocalCluster): Record<string, number | undefined> => ({
  ...Object.fromEntries(cluster.processes.map((p) => [p.name, cpuSeconds(p.child.pid)])),
  "nats-server": cpuSeconds(cluster.nats.pid()),
});
const ended = (b: Batch) => b.state === BatchState.BATCH_STATE_COMPLETED || b.state === BatchState.BATCH_STATE_CANCELLED;

async function untilEnded(batches: RemoteBatches, batchId: string): Promise<Batch> {
  return batches.watch(batchId, () => {}, new AbortController().signal);
}

/** The p-quantile (nearest rank) of ascending values. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

export async function runBatchBench(o: BatchBenchOptions): Promise<BatchBenchReport> {
  const say = o.onProgress ?? (() => {});
  const engine = ["--threads", String(o.threads), "--context-size", String(o.contextSize)];
  const request = ["--k", String(o.k), "--max-tokens", String(o.maxTokens)];
  const run = `r${randomBytes(3).toString("hex")}`;

  say(`embedded gateway: ${o.items} Asks one at a time (after one warm-up)`);
  const embeddedServer = ClusterProcess.spawn("embedded gateway", ["serve", "--store", o.store, "--model", o.modelPath, "--port", "0", ...engine, ...request]);
  let embedded: BatchBenchReport["embedded_one_by_one"];
  try {
    const address = (await embeddedServer.waitFor(/listening on (\S+)/, 120_000))[1]!;
    await timedAsk(address, BENCH_QUESTIONS[0]!);
    const started = performance.now();
    for (let i = 0; i < o.items; i++) await timedAsk(address, BENCH_QUESTIONS[i % BENCH_QUESTIONS.length]!);
    const wall = performance.now() - started;
    embedded = { items: o.items, wall_ms: wall, items_per_minute: (o.items / wall) * 60_000 };
  } finally {
    await embeddedServer.stop("SIGTERM");
  }

  const batchRuns: BatchRun[] = [];
  let interactive: BatchBenchReport["interactive"] = null;
  let large: BatchBenchReport["large"] = null;
  const counts = [...new Set(o.workerCounts)].sort((a, b) => a - b);
  for (const workers of counts) {
    say(`cluster with ${workers} worker(s): starting`);
    const cluster = await LocalCluster.start({ store: o.store, workers, modelPath: o.modelPath, workerArgs: engine, gatewayArgs: request });
    const batches = new RemoteBatches({ server: cluster.gatewayAddress });
    try {
      // Warm every worker (first decode allocations, page cache) before the clock starts.
      await Promise.all(Array.from({ length: workers }, (_, i) => timedAsk(cluster.gatewayAddress, BENCH_QUESTIONS[i % BENCH_QUESTIONS.length]!)));
      const cpuBefore = clusterCpu(cluster);
      say(`cluster with ${workers} worker(s): a batch of ${o.items} items`);
      const started = performance.now();
      const id = `bench-${run}-${workers}w`;
      await batches.create(id, items(o.items, id), "bench batch");
      const end = await untilEnded(batches, id);
      const wall = performance.now() - started;
      const cpu = cpuBetween(cpuBefore, clusterCpu(cluster));
      batchRuns.push({
        workers,
        items: o.items,
        wall_ms: wall,
        items_per_minute: (o.items / wall) * 60_000,
        succeeded: end.counts!.succeeded,
        jobs_per_worker: await jobsPerWorker(cluster.workers, `${id}-`),
        cpu_s: cpu,
        cores_s: Math.round((wall / 1000) * availableParallelism() * 100) / 100,
      });
      if (workers !== counts.at(-1)) continue;

      if (o.interactive > 0) {
        const question = BENCH_QUESTIONS[0]!;
        say(`cluster with ${workers} worker(s): ${o.interactive} interactive Asks idle, then ${o.interactive} while a batch of 30 runs`);
        const idle: number[] = [];
        for (let i = 0; i < o.interactive; i++) idle.push((await timedAsk(cluster.gatewayAddress, question)).ms);
        const busyId = `busy-${run}`;
        await batches.create(busyId, items(30, busyId), "bench interactive load");
        // Wait until the workers are busy with the batch before asking.
        for (let b = await batches.get(busyId); b.counts!.running < workers && !ended(b); b = await batches.get(busyId)) await new Promise((r) => setTimeout(r, 200));
        const during: number[] = [];
        for (let i = 0; i < o.interactive; i++) during.push((await timedAsk(cluster.gatewayAddress, question)).ms);
        await batches.cancel(busyId);
        await untilEnded(batches, busyId);
        const idleStats = stats(idle);
        const duringStats = stats(during);
        interactive = { workers, batch_items: 30, idle: idleStats, during_batch: duringStats, ratio: duringStats.median_ms / idleStats.median_ms };
      }

      if (o.large > 0) {
        say(`cluster with ${workers} worker(s): a batch of ${o.large} tiny items (k 1, 1 token)`);
        const pad = " Give every quantity, temperature and time, and say why each step is needed.".repeat(5);
        const bigId = `large-${run}`;
        const bigItems = Array.from({ length: o.large }, (_, i) => ({
          itemId: `${bigId}-${i}`,
          request: AskRequest.fromPartial({ question: `${BENCH_QUESTIONS[i % BENCH_QUESTIONS.length]!}${pad}`, retrieval: { k: 1 }, generation: { maxTokens: 1 } }),
        }));
        const bytes = bigItems.reduce((s, item) => s + item.itemId.length + AskRequest.encode(item.request).finish().length + 8, 0);
        const t0 = performance.now();
        await batches.create(bigId, bigItems, "bench large");
        const submit = performance.now() - t0;
        const reads: number[] = [];
        let last: Batch | undefined;
        for (let i = 0; i < 40; i++) {
          const t = performance.now();
          last = await batches.get(bigId);
          reads.push(performance.now() - t);
          await new Promise((r) => setTimeout(r, 500));
        }
        let results = 0;
        const r0 = performance.now();
        await batches.results(bigId, 0, false, () => void results++, new AbortController().signal);
        const readMs = performance.now() - r0;
        const c0 = performance.now();
        await batches.cancel(bigId);
        await untilEnded(batches, bigId);
        const cancelMs = performance.now() - c0;
        const sorted = [...reads].sort((a, b) => a - b);
        const c = last!.counts!;
        large = {
          workers,
          items: o.large,
          request_bytes: bytes,
          submit_ms: submit,
          status: { ...stats(reads), p95_ms: percentile(sorted, 0.95), reads: reads.length, finished_at_end: c.succeeded + c.failed + c.cancelled },
          results_read: { results, ms: readMs },
          cancel_to_end_ms: cancelMs,
        };
      }
    } finally {
      batches.close();
      await cluster.stop();
    }
  }

  const one = batchRuns.find((b) => b.workers === 1);
  const speedup = Object.fromEntries(one === undefined ? [] : batchRuns.map((b) => [String(b.workers), b.items_per_minute / one.items_per_minute]));
  return {
    bench: "batch",
    model: o.modelPath,
    settings: { k: o.k, max_tokens: o.maxTokens, threads_per_worker: o.threads, context_size: o.contextSize, items: o.items, interactive: o.interactive, large: o.large },
    embedded_one_by_one: embedded,
    batches: batchRuns,
    speedup,
    cluster_vs_embedded: one === undefined ? null : one.items_per_minute / embedded.items_per_minute,
    interactive,
    large,
    goals: { speedup_2_workers: 1.7, cluster_vs_embedded: 0.9, interactive_ratio: 2 },
  };
}
