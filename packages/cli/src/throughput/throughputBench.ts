// `attr-rag bench throughput`: what continuous batching buys one engine context. The same N Asks go through one
// embedded gateway (in this process, served over gRPC on 127.0.0.1) at each concurrency c: c Asks in flight at
// once, the gateway admitting c (maxConcurrentAsks) and the engine decoding their jobs together. Reported per c:
// Asks/minute, the context's llama_decode calls per Ask and mean rows per call (its scheduler counters), latency
// percentiles, and whether every final answer, selection and α table equals the concurrency-1 run.
import { availableParallelism } from "node:os";
import { AskRequest, AttributionTable, SelectionExplanation, type AskEvent } from "@attr-rag/contracts";
import { DEFAULT_CONFIG, Runtime, startGatewayServer } from "@attr-rag/gateway";
import { remoteAsk } from "../ask/remoteAsk.js";
import { percentile } from "../cluster/batchBench.js";
import { BENCH_QUESTIONS } from "../cluster/clusterBench.js";

export interface ThroughputBenchOptions {
  readonly store: string;
  readonly modelPath: string;
  /** The store's embedder (it embeds the questions): use-lite or gguf:PATH; default use-lite. */
  readonly embedder?: string;
  /** Layers offloaded to the GPU backend (default $ATTR_RAG_GPU_LAYERS, which --gpu cuda|vulkan sets to -1, else 0). */
  readonly gpuLayers?: number;
  readonly concurrency: readonly number[];
  readonly asks: number;
  readonly k: number;
  readonly maxTokens: number;
  readonly threads: number;
  /** Sequences each Ask's jobs may use (the context gets concurrency × this). */
  readonly sequencesPerAsk: number;
  /** KV cells per sequence (the context gets sequences × this). */
  readonly cellsPerSequence: number;
  /** Occlusion strategy of the gateway (default speculative, the gateway's own default). */
  readonly strategy?: "naive" | "prefix-shared" | "speculative";
  readonly onProgress?: (line: string) => void;
}

export interface ThroughputRun {
  concurrency: number;
  asks: number;
  wall_ms: number;
  asks_per_minute: number;
  decode_calls: number;
  decode_calls_per_ask: number;
  mean_rows_per_call: number;
  /** Wall time inside llama_decode per call and per row: what the rows themselves cost. */
  ms_per_decode_call: number;
  us_per_row: number;
  /** Share of the run's wall time the context spent inside llama_decode. */
  decode_share: number;
  /** Calls that carried tokens of more than one job. */
  multi_job_calls: number;
  latency: { p50_ms: number; p95_ms: number };
  /** Every Ask's final answer, selection and α table equal the concurrency-1 run's (null for that run). */
  same_as_concurrency_1: boolean | null;
  /** Asks whose answer, selection or α table differed from the concurrency-1 run. */
  differing_asks: number[];
  context: { sequences: number; cells: number };
  /** CPU seconds this process (gateway, engine and client) used, beside the core-seconds the machine offered. */
  cpu_s: number;
  cores_s: number;
}

export interface ThroughputBenchReport {
  bench: "throughput";
  settings: { asks: number; k: number; max_tokens: number; threads: number; sequences_per_ask: number; cells_per_sequence: number; strategy: string; embedder: string };
  runs: ThroughputRun[];
  /** At the highest concurrency, relative to concurrency 1. */
  highest: { concurrency: number; decode_calls_per_ask_ratio: number; asks_per_minute_ratio: number } | null;
  goals: { decode_calls_per_ask_ratio: number; asks_per_minute_ratio_overhead_bound: number; asks_per_minute_ratio_compute_bound: number };
}

interface AskOutcome {
  ms: number;
  signature: string;
}

async function ask(address: string, question: string): Promise<AskOutcome> {
  let answer = "";
  let selection = "";
  let alpha = "";
  const started = performance.now();
  await remoteAsk({ address }, AskRequest.fromPartial({ question }), (e: AskEvent) => {
    const s = e.stage;
    if (s?.$case === "finalAnswer") answer = s.value.text;
    else if (s?.$case === "selection") selection = JSON.stringify(SelectionExplanation.toJSON(s.value));
    // Sentence drops are log-probabilities: batched with other Asks' rows they round differently (exact up to
    // floating point, tested in the engine), so the answer, the selection and α are what must be the same.
    else if (s?.$case === "attribution") alpha = JSON.stringify(AttributionTable.toJSON({ ...s.value, sentences: undefined }));
  }, new AbortController().signal);
  return { ms: performance.now() - started, signature: JSON.stringify([answer, selection, alpha]) };
}

/** Runs the N Asks with at most `c` in flight; results in question order. */
async function askAll(address: string, questions: readonly string[], c: number): Promise<AskOutcome[]> {
  const out: AskOutcome[] = new Array(questions.length);
  let next = 0;
  const lane = async () => {
    while (next < questions.length) {
      const i = next++;
      out[i] = await ask(address, questions[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(c, questions.length) }, lane));
  return out;
}

function gpuLayersFromEnv(): number {
  const v = process.env.ATTR_RAG_GPU_LAYERS?.trim();
  return v ? Number(v) : DEFAULT_CONFIG.gpuLayers;
}

export async function runThroughputBench(o: ThroughputBenchOptions): Promise<ThroughputBenchReport> {
  const say = o.onProgress ?? (() => {});
  const questions = Array.from({ length: o.asks }, (_, i) => BENCH_QUESTIONS[i % BENCH_QUESTIONS.length]!);
  const runs: ThroughputRun[] = [];
  let reference: string[] | undefined;
  for (const c of o.concurrency) {
    const sequences = Math.min(256, c * o.sequencesPerAsk);
    const cells = sequences * o.cellsPerSequence;
    say(`concurrency ${c}: opening an embedded gateway (${sequences} sequences, ${cells} KV cells, maxConcurrentAsks ${c})`);
    const runtime = await Runtime.open({
      ...DEFAULT_CONFIG,
      store: o.store,
      model: o.modelPath,
      embedder: o.embedder ?? DEFAULT_CONFIG.embedder,
      // The gateway's config pins gpuLayers (0 by default) and Model.load takes it over the environment, so the
      // --gpu choice has to be passed on here; without it the layers stayed on the CPU.
      gpuLayers: o.gpuLayers ?? gpuLayersFromEnv(),
      k: o.k,
      maxTokens: o.maxTokens,
      threads: o.threads,
      sequences,
      contextSize: cells,
      maxConcurrentAsks: c,
      strategy: o.strategy ?? DEFAULT_CONFIG.strategy,
      maxQueuedAsks: o.asks,
    });
    const server = await startGatewayServer({ runtime, log: () => {} });
    try {
      // One warm-up Ask (page cache, allocator), not counted.
      await ask(server.address, questions[0]!);
      const before = runtime.generator.schedulerStats();
      say(`concurrency ${c}: ${o.asks} Asks`);
      const started = performance.now();
      const cpu = process.cpuUsage();
      const outcomes = await askAll(server.address, questions, c);
      const wall = performance.now() - started;
      const used = process.cpuUsage(cpu);
      const after = runtime.generator.schedulerStats();
      const calls = after.decodeCalls - before.decodeCalls;
      const rows = after.rows - before.rows;
      const signatures = outcomes.map((x) => x.signature);
      const latencies = outcomes.map((x) => x.ms).sort((a, b) => a - b);
      reference ??= c === 1 ? signatures : undefined;
      const differing = reference === undefined || c === 1 ? [] : signatures.flatMap((s, i) => (s === reference![i] ? [] : [i]));
      const run: ThroughputRun = {
        concurrency: c,
        asks: o.asks,
        wall_ms: wall,
        asks_per_minute: (o.asks / wall) * 60_000,
        decode_calls: calls,
        decode_calls_per_ask: calls / o.asks,
        mean_rows_per_call: calls > 0 ? rows / calls : 0,
        ms_per_decode_call: calls > 0 ? (after.decodeMs - before.decodeMs) / calls : 0,
        us_per_row: rows > 0 ? ((after.decodeMs - before.decodeMs) * 1000) / rows : 0,
        decode_share: (after.decodeMs - before.decodeMs) / wall,
        multi_job_calls: after.multiJobCalls - before.multiJobCalls,
        latency: { p50_ms: percentile(latencies, 0.5), p95_ms: percentile(latencies, 0.95) },
        same_as_concurrency_1: c === 1 || reference === undefined ? null : differing.length === 0,
        differing_asks: differing,
        context: { sequences, cells },
        cpu_s: (used.user + used.system) / 1e6,
        cores_s: (wall / 1000) * availableParallelism(),
      };
      runs.push(run);
      say(
        `concurrency ${c}: ${run.asks_per_minute.toFixed(2)} Asks/minute, ${run.decode_calls_per_ask.toFixed(0)} decode calls per Ask, ` +
          `${run.mean_rows_per_call.toFixed(1)} rows per call (${run.ms_per_decode_call.toFixed(1)} ms, ${run.us_per_row.toFixed(0)} µs per row, ${(run.decode_share * 100).toFixed(0)} % of the time in llama_decode), p50 ${(run.latency.p50_ms / 1000).toFixed(1)} s, CPU ${run.cpu_s.toFixed(0)} of ${run.cores_s.toFixed(0)} core-s` +
          (run.same_as_concurrency_1 === null ? "" : run.same_as_concurrency_1 ? ", same as concurrency 1" : `, ${differing.length} Asks differ from concurrency 1`),
      );
    } finally {
      await server.close();
    }
  }
  const one = runs.find((r) => r.concurrency === 1);
  const top = runs.reduce<ThroughputRun | undefined>((m, r) => (m === undefined || r.concurrency > m.concurrency ? r : m), undefined);
  return {
    bench: "throughput",
    settings: { asks: o.asks, k: o.k, max_tokens: o.maxTokens, threads: o.threads, sequences_per_ask: o.sequencesPerAsk, cells_per_sequence: o.cellsPerSequence, strategy: o.strategy ?? DEFAULT_CONFIG.strategy, embedder: o.embedder ?? DEFAULT_CONFIG.embedder },
    runs,
    highest:
      one !== undefined && top !== undefined && top.concurrency > 1
        ? { concurrency: top.concurrency, decode_calls_per_ask_ratio: top.decode_calls_per_ask / one.decode_calls_per_ask, asks_per_minute_ratio: top.asks_per_minute / one.asks_per_minute }
        : null,
    goals: { decode_calls_per_ask_ratio: 0.3, asks_per_minute_ratio_overhead_bound: 1.5, asks_per_minute_ratio_compute_bound: 1.0 },
  };
}
