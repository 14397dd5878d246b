// `attr-rag bench cluster`: what the distributed mode costs and what it buys, measured end to end through
// the gateway's gRPC API as a client sees it. Latency: the same Ask, one at a time, against an embedded
// gateway (`attr-rag serve --store --model`) and against a cluster with one worker, with the same engine
// settings; the difference is the gateway + NATS overhead. Throughput: a batch of Asks in flight at once
// against clusters of 1, 2, … single-threaded workers.
import { randomBytes } from "node:crypto";
import { AskRequest, type AskEvent } from "@attr-rag/contracts";
import { remoteAsk } from "@attr-rag/gateway";
import { ClusterProcess } from "@attr-rag/cluster";
import { jobsPerWorker } from "./jobCounts.js";
import { LocalCluster } from "@attr-rag/cluster";

/** Procedural questions on the demo corpus; throughput asks cycle through them. */
export const BENCH_QUESTIONS = [
  "Explain all the required steps of the acetaminophen synthesis.",
  "How do I collect oxygen gas from hydrogen peroxide over water?",
  "What are the steps to titrate vinegar with sodium hydroxide?",
  "How is benzoic acid recrystallized from water?",
  "Explain the steps of the aspirin synthesis.",
  "How is caffeine extracted from tea leaves?",
  "How do I prepare an acetate buffer and measure its pH?",
  "How is isoamyl acetate made by Fischer esterification?",
];

export interface ClusterBenchOptions {
  readonly store: string;
  readonly modelPath: string;
  /** Worker counts to measure throughput at, e.g. [1, 2]. */
  readonly workerCounts: readonly number[];
  /** Asks in flight at once per throughput run. */
  readonly asks: number;
  /** Sequential asks per latency measurement (after one warm-up). */
  readonly repeats: number;
  readonly k: number;
  readonly maxTokens: number;
  /** Engine threads of the embedded gateway and of each worker. */
  readonly threads: number;
  readonly contextSize: number;
  readonly onProgress?: (line: string) => void;
}

export interface LatencyStats {
  median_ms: number;
  mean_ms: number;
  min_ms: number;
  runs_ms: number[];
}

export interface ThroughputRun {
  workers: number;
  asks: number;
  wall_ms: number;
  asks_per_minute: number;
  /** Engine jobs (occlusion, generation, likelihood) each worker finished for this run's Asks. */
  jobs_per_worker: number[];
}

export interface ClusterBenchReport {
  bench: "cluster";
  model: string;
  settings: { k: number; max_tokens: number; threads_per_worker: number; context_size: number; asks: number; repeats: number };
  latency: {
    question: string;
    embedded: LatencyStats;
    distributed_1_worker: LatencyStats;
    overhead_ms: number;
    overhead_fraction: number;
    /** The two final answers of the latency question are the same text (they must be: same engine settings). */
    same_final_answer: boolean;
  };
  throughput: ThroughputRun[];
  /** asks/minute with N workers ÷ asks/minute with 1 worker (when 1 was measured). */
  speedup: Record<string, number>;
  goals: { speedup_2_workers: number; overhead_fraction: number };
}

/** One Ask through a gateway; its wall time as the client saw it and its final answer. */
export async function timedAsk(address: string, question: string, requestId?: string): Promise<{ ms: number; finalAnswer: string }> {
  let finalAnswer = "";
  const started = performance.now();
  await remoteAsk({ address }, AskRequest.fromPartial({ question, ...(requestId !== undefined ? { requestId } : {}) }), (e: AskEvent) => {
    if (e.stage?.$case === "finalAnswer") finalAnswer = e.stage.value.text;
  }, new AbortController().signal);
  return { ms: performance.now() - started, finalAnswer };
}

async function latency(address: string, question: string, repeats: number): Promise<{ stats: LatencyStats; finalAnswer: string }> {
  const warm = await timedAsk(address, question);
  const runs: number[] = [];
  for (let i = 0; i < repeats; i++) runs.push((await timedAsk(address, question)).ms);
  return { stats: stats(runs), finalAnswer: warm.finalAnswer };
}

export function stats(runs: readonly number[]): LatencyStats {
  const sorted = [...runs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { median_ms: median, mean_ms: runs.reduce((s, x) => s + x, 0) / runs.length, min_ms: sorted[0]!, runs_ms: [...runs] };
}

export async function runClusterBench(o: ClusterBenchOptions): Promise<ClusterBenchReport> {
  const say = o.onProgress ?? (() => {});
  const engine = ["--threads", String(o.threads), "--context-size", String(o.contextSize)];
  const request = ["--k", String(o.k), "--max-tokens", String(o.maxTokens)];
  const question = BENCH_QUESTIONS[0]!;
  const run = `r${randomBytes(3).toString("hex")}`;

  say(`embedded gateway: ${o.repeats} asks one at a time (after one warm-up)`);
  const embeddedServer = ClusterProcess.spawn("embedded gateway", ["serve", "--store", o.store, "--model", o.modelPath, "--port", "0", ...engine, ...request]);
  let embedded;
  try {
    const address = (await embeddedServer.waitFor(/listening on (\S+)/, 120_000))[1]!;
    embedded = await latency(address, question, o.repeats);
  } finally {
    await embeddedServer.stop("SIGTERM");
  }

  const throughput: ThroughputRun[] = [];
  let distributed: Awaited<ReturnType<typeof latency>> | undefined;
  const counts = [...new Set([1, ...o.workerCounts])].sort((a, b) => a - b);
  for (const workers of counts) {
    say(`cluster with ${workers} worker(s): starting`);
    const cluster = await LocalCluster.start({
      store: o.store,
      workers,
      modelPath: o.modelPath,
      workerArgs: engine,
      // Every ask of a throughput batch admitted at once: the work queue, not the gateway, does the waiting.
      gatewayArgs: [...request, "--max-concurrent-asks", String(o.asks), "--max-queued-asks", String(o.asks)],
    });
    try {
      if (workers === 1) {
        say(`cluster with 1 worker: ${o.repeats} asks one at a time (after one warm-up)`);
        distributed = await latency(cluster.gatewayAddress, question, o.repeats);
      }
      if (!o.workerCounts.includes(workers)) continue;
      // Warm every worker (first decode allocations, page cache) before the clock starts.
      await Promise.all(Array.from({ length: workers }, (_, i) => timedAsk(cluster.gatewayAddress, BENCH_QUESTIONS[i % BENCH_QUESTIONS.length]!)));
      say(`cluster with ${workers} worker(s): ${o.asks} asks at once`);
      const prefix = `bench-${run}-${workers}w-`;
      const started = performance.now();
      await Promise.all(Array.from({ length: o.asks }, (_, i) => timedAsk(cluster.gatewayAddress, BENCH_QUESTIONS[i % BENCH_QUESTIONS.length]!, `${prefix}${i}`)));
      const wall = performance.now() - started;
      throughput.push({
        workers,
        asks: o.asks,
        wall_ms: wall,
        asks_per_minute: (o.asks / wall) * 60_000,
        jobs_per_worker: await jobsPerWorker(cluster.workers, prefix),
      });
    } finally {
      await cluster.stop();
    }
  }

  const one = throughput.find((t) => t.workers === 1);
  const speedup = Object.fromEntries(throughput.filter(() => one !== undefined).map((t) => [String(t.workers), t.asks_per_minute / one!.asks_per_minute]));
  const overhead = distributed!.stats.median_ms - embedded.stats.median_ms;
  return {
    bench: "cluster",
    model: o.modelPath,
    settings: { k: o.k, max_tokens: o.maxTokens, threads_per_worker: o.threads, context_size: o.contextSize, asks: o.asks, repeats: o.repeats },
    latency: {
      question,
      embedded: embedded.stats,
      distributed_1_worker: distributed!.stats,
      overhead_ms: overhead,
      overhead_fraction: overhead / embedded.stats.median_ms,
      same_final_answer: embedded.finalAnswer === distributed!.finalAnswer,
    },
    throughput,
    speedup,
    goals: { speedup_2_workers: 1.6, overhead_fraction: 0.05 },
  };
}
