// `bench throughput`'s report as it prints without --json: one line per run, the host ÷ device A/B, the goal.
import type { ThroughputBenchReport } from "./throughputBench.js";

export function throughputText(report: ThroughputBenchReport, model: string, settings: { asks: number; k: number; maxTokens: number; threads: number }): string[] {
  const lines: string[] = [];
  lines.push(`model ${model}: ${settings.asks} Asks, k ${settings.k}, ${settings.maxTokens} new tokens, ${settings.threads} engine thread(s)`);
  for (const r of report.runs) {
    lines.push(
      `${r.sampling} picks, ${r.kv_cache} KV, flash ${r.flash_attention}, concurrency ${String(r.concurrency).padStart(2)}: ${r.asks_per_minute.toFixed(2)} Asks/minute, ` +
        `${r.decode_calls_per_ask.toFixed(0)} decode calls per Ask, ${r.mean_rows_per_call.toFixed(1)} rows per call, latency p50 ${(r.latency.p50_ms / 1000).toFixed(1)} s p95 ${(r.latency.p95_ms / 1000).toFixed(1)} s, ` +
        `${r.engine.bytes_to_host_per_row.toFixed(0)} bytes and ${r.engine.host_us_per_row.toFixed(1)} µs of host time per output row, ${(r.engine.decode_share * 100).toFixed(0)} % of the wall in llama_decode` +
        (r.same_as_concurrency_1 === null ? "" : r.same_as_concurrency_1 ? ", same answers" : `, differs: Asks ${r.differing_asks.join(", ")}`),
    );
  }
  for (const ab of report.sampling_ab) {
    lines.push(
      `host ÷ device picks at concurrency ${ab.concurrency} (${ab.kv_cache} KV, flash ${ab.flash_attention}): host time per row ${ab.host_us_per_row_ratio.toFixed(0)}×, ` +
        `bytes per row ${ab.bytes_per_row.host.toFixed(0)} → ${ab.bytes_per_row.device.toFixed(0)}, Asks/minute ${ab.asks_per_minute_ratio.toFixed(2)}× on the device path, answers ${ab.same_answers ? "the same" : "DIFFER"}`,
    );
  }
  const h = report.highest;
  if (h !== null) {
    lines.push(`concurrency ${h.concurrency} ÷ 1: decode calls per Ask ${h.decode_calls_per_ask_ratio.toFixed(2)} (goal ≤ 0.3), Asks/minute ${h.asks_per_minute_ratio.toFixed(2)}×`);
  }
  return lines;
}
