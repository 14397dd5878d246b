// One of our engine's strategies on the bench workload, in its own process (peerChild.ts). The context has the
// shape `bench occlusion` gives it: one KV stream per sequence, n + 1 sequences, the same cells per sequence
// as every peer gets.
import { Model } from "@attr-rag/engine";
import { measureDeviceCeiling } from "../engine/deviceCeiling.js";
import type { OurSystem, PeerWorkload, SystemRun } from "./peerTypes.js";

export async function runOurs(system: OurSystem, w: PeerWorkload, withCeiling: boolean): Promise<Omit<SystemRun, "peak_rss_mib">> {
  const model = await Model.load(w.model);
  try {
    const ctx = await model.createContext({
      contextSize: w.sequenceCells * w.prompts.length,
      sequences: w.prompts.length,
      batchSize: w.batchSize,
      threads: w.threads,
      flashAttention: "off",
      kvUnified: false,
    });
    // Warm-up (and, once per bench, the ceiling line): full batches through llama_decode before the clock starts.
    const ceiling = await measureDeviceCeiling(ctx, withCeiling ? 3 : 1);
    const segments = { prefix: Int32Array.from(w.segments.prefix), blocks: w.segments.blocks.map((b) => Int32Array.from(b)), suffix: Int32Array.from(w.segments.suffix) };
    const before = ctx.schedulerStats();
    const t0 = performance.now();
    const result = await ctx.occlude({ segments, strategy: system, maxTokens: w.maxTokens });
    const wall = performance.now() - t0;
    const after = ctx.schedulerStats();
    const sequences = [result.full, ...result.occluded];
    return {
      system,
      wall_ms: wall,
      tokens_evaluated: result.counters.tokensEvaluated,
      decode_calls: after.decodeCalls - before.decodeCalls,
      answers: sequences.map((s) => [...s.tokens]),
      margins: sequences.map((s) => [...s.margins]),
      ...(withCeiling ? { ceiling } : {}),
      setup: `attr-rag engine, strategy ${system}: ${w.prompts.length} sequences × ${w.sequenceCells} cells (one KV stream each), batch ${w.batchSize}, ${w.threads} threads, flash attention off, rows read on the ${ctx.info.sampling} path`,
    };
  } finally {
    await model.dispose();
  }
}
