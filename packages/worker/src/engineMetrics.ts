import type { EngineContext } from "@attr-rag/engine";
import { counter, gauge, MetricSources } from "@attr-rag/telemetry";

/** An engine context in this process and the model id it serves (the gateway's embedded one, a worker's). */
export interface EngineSource {
  readonly engine: EngineContext;
  readonly model: string;
}

export const engineSources = new MetricSources<EngineSource>(registerEngineMetrics);

type Stats = ReturnType<EngineContext["schedulerStats"]>;

/**
 * The scheduler's figures, read at scrape time from the same call $SRV.STATS and GetCluster make. Only its
 * counters: looking at the KV cells themselves (sequencesInUse) waits for a llama_decode in flight, and a scrape
 * every second that blocked the event loop for a decode's length would starve the job's heartbeats (measured:
 * a redelivered occlusion job with a 2 s ack wait).
 */
function each(fn: (s: Stats, e: EngineSource) => void): void {
  for (const source of engineSources.items) {
    if (source.engine.disposed) continue;
    let stats: Stats;
    try {
      stats = source.engine.schedulerStats();
    } catch {
      continue; // a context that has no scheduler (none of ours today) reports nothing rather than failing the scrape
    }
    fn(stats, source);
  }
}

function registerEngineMetrics(): void {
  const totals: [string, string, (s: Stats) => number][] = [
    ["attr_rag_engine_decode_calls_total", "llama_decode calls the engine context made (continuous batching: one per scheduler step).", (s) => s.decodeCalls],
    ["attr_rag_engine_decode_rows_total", "Tokens (rows) those llama_decode calls carried; ÷ decode calls = rows per call.", (s) => s.rows],
    ["attr_rag_engine_decode_seconds_total", "Wall time spent inside llama_decode.", (s) => s.decodeMs / 1000],
    ["attr_rag_engine_multi_job_calls_total", "llama_decode calls that carried tokens of more than one job.", (s) => s.multiJobCalls],
    ["attr_rag_engine_jobs_admitted_total", "Jobs admitted to the engine context.", (s) => s.jobsAdmitted],
    ["attr_rag_engine_jobs_waited_total", "Admitted jobs that first waited for room in the KV cache.", (s) => s.jobsWaited],
    ["attr_rag_engine_prefix_tokens_shared_total", "Prompt positions copied from another running job's KV instead of decoded (cross-job prefix reuse).", (s) => s.prefixTokensShared],
  ];
  for (const [name, help, read] of totals) {
    counter({
      name,
      help,
      labelNames: ["model"],
      collect() {
        this.reset();
        each((s, e) => this.inc({ model: e.model }, read(s)));
      },
    });
  }

  const levels: [string, string, (s: Stats) => number][] = [
    ["attr_rag_engine_jobs_running", "Jobs the engine context is running now.", (s) => s.activeJobs],
    ["attr_rag_engine_jobs_waiting", "Jobs waiting for room in the engine context's KV cache now.", (s) => s.waitingJobs],
    ["attr_rag_engine_kv_cells", "KV cells of the engine context (its capacity).", (s) => s.cells],
    ["attr_rag_engine_kv_cells_reserved", "KV cells the running jobs reserved (unified cache; 0 with per-sequence streams).", (s) => s.cellsReserved],
    ["attr_rag_engine_sequences", "KV sequences of the engine context.", (s) => s.sequences],
    ["attr_rag_engine_sequences_reserved", "KV sequences the running jobs reserved.", (s) => s.sequencesReserved],
    [
      "attr_rag_engine_kv_usage_ratio",
      "Share of the KV cache the running jobs hold, 0 to 1 (like vllm:kv_cache_usage_perc): reserved cells ÷ cells with a unified cache, reserved sequences ÷ sequences with per-sequence streams.",
      (s) => (s.cellsReserved > 0 && s.cells > 0 ? s.cellsReserved / s.cells : s.sequences > 0 ? s.sequencesReserved / s.sequences : 0),
    ],
  ];
  for (const [name, help, read] of levels) {
    gauge({
      name,
      help,
      labelNames: ["model"],
      collect() {
        this.reset();
        each((s, e) => this.set({ model: e.model }, read(s)));
      },
    });
  }
}
