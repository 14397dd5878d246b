// What the device can do, measured in the same run as a benchmark: tokens per second inside llama_decode for
// one full batch (a prompt of batchSize tokens on one sequence, one output row), the best of a few tries. A
// workload's rows per second in llama_decode then reads as a fraction of this ceiling. And what a stretch of a
// run cost the engine per output row: bytes to the host, host time reading rows, share of wall in llama_decode.
import type { EngineContext, SchedulerStats } from "@attr-rag/engine";

export interface DeviceCeiling {
  /** Tokens in the batch and tokens per second inside llama_decode (best of `tries`). */
  batch_tokens: number;
  tokens_per_s: number;
  tries: number;
}

export async function measureDeviceCeiling(ctx: EngineContext, tries = 3): Promise<DeviceCeiling> {
  const n = Math.max(8, Math.min(ctx.info.batchSize, ctx.info.sequenceCells - 8));
  // Ordinary ids past the specials, cycling: the cost of a batch does not depend on which tokens it holds.
  const vocab = ctx.model.info.nVocab;
  const prefix = Int32Array.from({ length: n - 1 }, (_, i) => 10 + (i % Math.max(1, Math.min(vocab - 10, 1000))));
  const last = Int32Array.of(prefix[0]!);
  let best = 0;
  for (let i = 0; i < tries; i++) {
    const before = ctx.schedulerStats();
    await ctx.scoreContinuations({ segments: { prefix, blocks: [], suffix: last }, continuation: last, coalitions: [[]] });
    const after = ctx.schedulerStats();
    const ms = after.decodeMs - before.decodeMs;
    if (ms > 0) best = Math.max(best, ((after.rows - before.rows) * 1000) / ms);
  }
  return { batch_tokens: n + 1, tokens_per_s: best, tries };
}

export interface EngineCost {
  /** Output rows read, and what reading them cost: bytes llama.cpp copied to the host, host µs per row. */
  output_rows: number;
  bytes_to_host_per_row: number;
  host_us_per_row: number;
  /** Rows (tokens) per second inside llama_decode, and that as a share of the device ceiling. */
  decode_tokens_per_s: number;
  ceiling_fraction: number | null;
  /** Share of the wall time spent inside llama_decode. */
  decode_share: number;
}

export function engineCost(before: SchedulerStats, after: SchedulerStats, wallMs: number, ceiling?: DeviceCeiling): EngineCost {
  const rows = after.outputRows - before.outputRows;
  const decodeMs = after.decodeMs - before.decodeMs;
  const tokensPerS = decodeMs > 0 ? ((after.rows - before.rows) * 1000) / decodeMs : 0;
  return {
    output_rows: rows,
    bytes_to_host_per_row: rows > 0 ? (after.bytesToHost - before.bytesToHost) / rows : 0,
    host_us_per_row: rows > 0 ? ((after.hostRowMs - before.hostRowMs) * 1000) / rows : 0,
    decode_tokens_per_s: tokensPerS,
    ceiling_fraction: ceiling !== undefined && ceiling.tokens_per_s > 0 ? tokensPerS / ceiling.tokens_per_s : null,
    decode_share: wallMs > 0 ? decodeMs / wallMs : 0,
  };
}
