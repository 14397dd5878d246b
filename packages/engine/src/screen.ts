// Hierarchical occlusion (after AttriBoT): one batched teacher-forced pass over approximate caches scores
// how much log P(A_full) drops without each set; only the sets that matter most are regenerated, the others
// keep A_full as their answer (α = 0 on every metric) and are reported as screened. APPROXIMATE: a set the
// screen misjudges is never regenerated.
import type { PromptSegments } from "@attr-rag/core";
import type { EngineContext } from "./EngineContext.js";
import { EngineArgumentError } from "./errors.js";
import { isTokenSegments, type ApproximateStrategy, type OcclusionCounters, type OcclusionResult, type OcclusionStrategy } from "./occlude.js";
import type { GeneratedSequence } from "./sequenceText.js";
import type { TokenSegments } from "./tokenSegments.js";

export interface ScreenOptions {
  segments: PromptSegments | TokenSegments;
  maxTokens?: number;
  stop?: readonly string[];
  /** Strategy that regenerates the kept sets (default speculative: exact). */
  regenerate?: OcclusionStrategy;
  /** Cache of the screening pass (default kv-reuse, or kv-mask on a unified KV cache). */
  screenWith?: ApproximateStrategy;
  /** Regenerate the sets whose drop in log P(A_full) (nats) is at least this … */
  threshold?: number;
  /** … or, without a threshold, the top K by drop (default ⌈n / 2⌉). */
  topK?: number;
  signal?: AbortSignal;
}

export interface ScreenResult extends OcclusionResult {
  /** Per block: log P(A_full | all sets) − log P(A_full | without the set), from the screening pass. */
  drops: number[];
  /** Blocks regenerated, in block order, and blocks screened out (their answer is A_full). */
  regenerated: number[];
  screened: number[];
  /** Work of the screening pass alone (included in `counters`). */
  screenCounters: OcclusionCounters;
}

function addCounters(a: OcclusionCounters, b: OcclusionCounters): OcclusionCounters {
  const out = { ...a };
  for (const k of Object.keys(b) as (keyof OcclusionCounters)[]) out[k] = a[k] + b[k];
  return out;
}

/** Blocks to regenerate: drop ≥ threshold, or the top K by drop (ties: earlier block), in block order. */
export function chooseRegenerated(drops: readonly number[], o: { threshold?: number; topK?: number }): number[] {
  if (o.threshold !== undefined) {
    if (!Number.isFinite(o.threshold)) throw new EngineArgumentError(`threshold must be a finite number, got ${o.threshold}`);
    return drops.flatMap((d, j) => (d >= o.threshold! ? [j] : []));
  }
  const k = o.topK ?? Math.ceil(drops.length / 2);
  if (!Number.isInteger(k) || k < 0) throw new EngineArgumentError(`topK must be an integer ≥ 0, got ${k}`);
  return drops
    .map((d, j) => [d, j] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1])
    .slice(0, k)
    .map(([, j]) => j)
    .sort((a, b) => a - b);
}

export async function screenOcclusion(ctx: EngineContext, o: ScreenOptions): Promise<ScreenResult> {
  if (o.threshold !== undefined && o.topK !== undefined) throw new EngineArgumentError("give threshold or topK, not both");
  const segments = isTokenSegments(o.segments) ? o.segments : ctx.tokenize(o.segments);
  const common = { segments, ...(o.maxTokens !== undefined ? { maxTokens: o.maxTokens } : {}), ...(o.stop ? { stop: o.stop } : {}), ...(o.signal ? { signal: o.signal } : {}) };
  const first = await ctx.occlude({ ...common, occlude: [], strategy: "prefix-shared" });
  const full = first.full;
  const blocks = segments.blocks.map((_, j) => j);
  const screenWith = o.screenWith ?? (ctx.info.kvUnified ? "kv-mask" : "kv-reuse");
  const screen = await ctx.forced({ segments, strategy: screenWith, full: full.tokens, forced: blocks.map(() => full.tokens), ...(o.signal ? { signal: o.signal } : {}) });
  const drops = screen.perSet.map((p) => screen.fullLogProb - p.logProb);
  const regenerated = chooseRegenerated(drops, o);
  const screened = blocks.filter((j) => !regenerated.includes(j));
  let counters = addCounters(first.counters, screen.counters);
  const answers = new Map<number, GeneratedSequence>();
  if (regenerated.length > 0) {
    const again = await ctx.occlude({
      ...common,
      occlude: regenerated,
      strategy: o.regenerate ?? "speculative",
      givenFull: { tokens: full.tokens, endedWithEog: full.finish === "eog" },
    });
    counters = addCounters(counters, again.counters);
    regenerated.forEach((j, k) => answers.set(j, again.occluded[k]!));
  }
  return {
    full,
    occluded: blocks.map((j) => answers.get(j) ?? { ...full, tokens: full.tokens.slice(), margins: full.margins.slice() }),
    occludedBlocks: blocks,
    counters,
    strategy: o.regenerate ?? "speculative",
    drops,
    regenerated,
    screened,
    screenCounters: screen.counters,
  };
}
