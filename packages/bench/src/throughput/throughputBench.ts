// `attr-rag bench throughput`: what continuous batching buys one engine context. The same N Asks go through one
// embedded gateway (in this process, served over gRPC on 127.0.0.1) at each concurrency c: c Asks in flight at
// once, the gateway admitting c (maxConcurrentAsks) and the engine decoding their jobs together. Reported per c:
// Asks/minute, the context's llama_decode calls per Ask and mean rows per call (its scheduler counters), latency
// percentiles, and whether every final answer, selection and α table equals the concurrency-1 run.
import { availableParallelism } from "node:os";
import { AskRequest, AttributionTable, SelectionExplanation, type AskEvent } from "@attr-rag/contracts";
import { DEFAULT_CONFIG, remoteAsk, Runtime, startGatewayServer } from "@attr-rag/gateway";
import { engineCost, measureDeviceCeiling, type DeviceCeiling, type EngineCost } from "../engine/deviceCeiling.js";
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
  /**
   * Engine set-ups, each run at every concurrency (default: the gateway's own). Runs of one set-up are compared
   * with its concurrency-1 run, and every set-up's with the first one's at the same concurrency.
   */
  readonly variants?: readonly EngineVariant[];
  readonly onProgress?: (line: string) => void;
}

export interface EngineVariant {
  sampling: "device" | "host";
  kvCache: "streams" | "unified";
  flashAttention: "off" | "on" | "auto";
}

export interface ThroughputRun {
  /** The engine set-up: where rows are read, the KV layout, flash attention. */
  sampling: "device" | "host";
  kv_cache: "streams" | "unified";
  flash_attention: "off" | "on" | "auto";
  /** Why a device request ran on the host path ("" when it did not). */
  sampling_why: string;
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
  /** Output rows and what reading them cost; rows per second in llama_decode as a share of the ceiling. */
  engine: EngineCost;
  /** This context's own rate: one full batch inside llama_decode, measured before the Asks. */
  device_ceiling: DeviceCeiling;
  /** Every Ask's answer, selection and α table equal the first set-up's at this concurrency (null for that set-up). */
  same_as_first_variant: boolean | null;
}

export interface ThroughputBenchReport {
  bench: "throughput";
  settings: { asks: number; k: number; max_tokens: number; threads: number; sequences_per_ask: number; cells_per_sequence: number; strategy: string; embedder: string; variants: EngineVariant[] };
  runs: ThroughputRun[];
  /** At the highest concurrency, relative to concurrency 1 (the first set-up's runs). */
  highest: { concurrency: number; decode_calls_per_ask_ratio: number; asks_per_minute_ratio: number } | null;
  /**
   * Host path against device picks at each concurrency where both ran with the same KV layout and flash
   * attention: host time per output row and Asks/minute, host ÷ device (> 1: the device path is better).
   */
  sampling_ab: { concurrency: number; kv_cache: string; flash_attention: string; host_us_per_row_ratio: number; asks_per_minute_ratio: number; bytes_per_row: { host: number; device: number }; same_answers: boolean }[];
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

const variantTag = (v: EngineVariant) => `${v.sampling} picks, ${v.kvCache} KV, flash attention ${v.flashAttention}`;

/** One embedded gateway with set-up `v` at concurrency `c`: a warm-up Ask, the device ceiling, then the Asks. */
async function runOnce(o: ThroughputBenchOptions, v: EngineVariant, c: number, questions: readonly string[], say: (line: string) => void) {
  const tag = variantTag(v);
  const sequences = Math.min(256, c * o.sequencesPerAsk);
  const cells = sequences * o.cellsPerSequence;
  say(`${tag}, concurrency ${c}: opening an embedded gateway (${sequences} sequences, ${cells} KV cells, maxConcurrentAsks ${c})`);
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
    sampling: v.sampling,
    kvCache: v.kvCache,
    flashAttention: v.flashAttention,
  });
  const server = await startGatewayServer({ runtime, log: () => {} });
  try {
    // One warm-up Ask (page cache, allocator), not counted.
    await ask(server.address, questions[0]!);
    const ceiling = await measureDeviceCeiling(runtime.generator);
    const before = runtime.generator.schedulerStats();
    say(`${tag}, concurrency ${c}: ${o.asks} Asks (device ceiling ${ceiling.tokens_per_s.toFixed(0)} tokens/s)`);
    const started = performance.now();
    const cpu = process.cpuUsage();
    const outcomes = await askAll(server.address, questions, c);
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const after = runtime.generator.schedulerStats();
    const calls = after.decodeCalls - before.decodeCalls;
    const rows = after.rows - before.rows;
    const latencies = outcomes.map((x) => x.ms).sort((a, b) => a - b);
    const info = runtime.generator.info;
    const run: ThroughputRun = {
      sampling: info.sampling,
      kv_cache: v.kvCache,
      flash_attention: v.flashAttention,
      sampling_why: info.samplingWhy,
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
      same_as_concurrency_1: null,
      differing_asks: [],
      context: { sequences, cells },
      cpu_s: (used.user + used.system) / 1e6,
      cores_s: (wall / 1000) * availableParallelism(),
      engine: engineCost(before, after, wall, ceiling),
      device_ceiling: ceiling,
      same_as_first_variant: null,
    };
    return { run, signatures: outcomes.map((x) => x.signature) };
  } finally {
    await server.close();
  }
}

export async function runThroughputBench(o: ThroughputBenchOptions): Promise<ThroughputBenchReport> {
  const say = o.onProgress ?? (() => {});
  const questions = Array.from({ length: o.asks }, (_, i) => BENCH_QUESTIONS[i % BENCH_QUESTIONS.length]!);
  const runs: ThroughputRun[] = [];
  const variants = o.variants ?? [{ sampling: DEFAULT_CONFIG.sampling, kvCache: DEFAULT_CONFIG.kvCache, flashAttention: DEFAULT_CONFIG.flashAttention }];
  const signaturesOf = new Map<ThroughputRun, string[]>();
  const concurrencyOne = new Map<EngineVariant, string[]>();
  // Set-ups back to back at each concurrency, so a drift of the machine's speed does not favour one of them.
  for (const c of o.concurrency) {
    let first: string[] | undefined;
    for (const v of variants) {
      const { run, signatures } = await runOnce(o, v, c, questions, say);
      if (c === 1) concurrencyOne.set(v, signatures);
      const reference = concurrencyOne.get(v);
      const differing = reference === undefined || c === 1 ? [] : signatures.flatMap((s, i) => (s === reference[i] ? [] : [i]));
      run.same_as_concurrency_1 = c === 1 || reference === undefined ? null : differing.length === 0;
      run.differing_asks = differing;
      run.same_as_first_variant = first === undefined ? null : signatures.every((s, i) => s === first![i]);
      first ??= signatures;
      runs.push(run);
      signaturesOf.set(run, signatures);
      const tag = variantTag(v);
      say(
        `${tag}, concurrency ${c}: ${run.asks_per_minute.toFixed(2)} Asks/minute, ${run.decode_calls_per_ask.toFixed(0)} decode calls per Ask, ` +
          `${run.mean_rows_per_call.toFixed(1)} rows per call (${run.ms_per_decode_call.toFixed(1)} ms, ${run.us_per_row.toFixed(0)} µs per row, ${(run.decode_share * 100).toFixed(0)} % of the time in llama_decode), p50 ${(run.latency.p50_ms / 1000).toFixed(1)} s, CPU ${run.cpu_s.toFixed(0)} of ${run.cores_s.toFixed(0)} core-s` +
          (run.same_as_concurrency_1 === null ? "" : run.same_as_concurrency_1 ? ", same as concurrency 1" : `, ${differing.length} Asks differ from concurrency 1`),
      );
      say(
        `${tag}, concurrency ${c}: ${run.engine.output_rows} output rows, ${run.engine.bytes_to_host_per_row.toFixed(0)} bytes and ${run.engine.host_us_per_row.toFixed(1)} µs of host time each; ` +
          `${run.engine.decode_tokens_per_s.toFixed(0)} tokens/s in llama_decode, ${((run.engine.ceiling_fraction ?? 0) * 100).toFixed(0)} % of the device ceiling`,
      );
    }
  }
  const firstRuns = runs.filter((r) => r.sampling === runs[0]?.sampling && r.kv_cache === runs[0]?.kv_cache && r.flash_attention === runs[0]?.flash_attention);
  const one = firstRuns.find((r) => r.concurrency === 1);
  const top = firstRuns.reduce<ThroughputRun | undefined>((m, r) => (m === undefined || r.concurrency > m.concurrency ? r : m), undefined);
  const samplingAb = runs.flatMap((h) => {
    if (h.sampling !== "host") return [];
    const d = runs.find((r) => r.sampling === "device" && r.concurrency === h.concurrency && r.kv_cache === h.kv_cache && r.flash_attention === h.flash_attention);
    if (d === undefined) return [];
    const hs = signaturesOf.get(h)!;
    return [{
      concurrency: h.concurrency,
      kv_cache: h.kv_cache,
      flash_attention: h.flash_attention,
      host_us_per_row_ratio: d.engine.host_us_per_row > 0 ? h.engine.host_us_per_row / d.engine.host_us_per_row : 0,
      asks_per_minute_ratio: d.asks_per_minute / h.asks_per_minute,
      bytes_per_row: { host: h.engine.bytes_to_host_per_row, device: d.engine.bytes_to_host_per_row },
      same_answers: signaturesOf.get(d)!.every((s, i) => s === hs[i]),
    }];
  });
  return {
    bench: "throughput",
    settings: { asks: o.asks, k: o.k, max_tokens: o.maxTokens, threads: o.threads, sequences_per_ask: o.sequencesPerAsk, cells_per_sequence: o.cellsPerSequence, strategy: o.strategy ?? DEFAULT_CONFIG.strategy, embedder: o.embedder ?? DEFAULT_CONFIG.embedder, variants: [...variants] },
    runs,
    highest:
      one !== undefined && top !== undefined && top.concurrency > 1
        ? { concurrency: top.concurrency, decode_calls_per_ask_ratio: top.decode_calls_per_ask / one.decode_calls_per_ask, asks_per_minute_ratio: top.asks_per_minute / one.asks_per_minute }
        : null,
    sampling_ab: samplingAb,
    goals: { decode_calls_per_ask_ratio: 0.3, asks_per_minute_ratio_overhead_bound: 1.5, asks_per_minute_ratio_compute_bound: 1.0 },
  };
}
