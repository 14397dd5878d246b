// Hierarchical occlusion (after AttriBoT): one batched teacher-forced pass over approximate caches scores
// how much log P(A_full) drops without each set; only the sets that matter most are regenerated, the others
// keep A_full as their answer (α = 0 on every metric) and are reported as screened. APPROXIMATE: a set the
// screen misjudges is never regenerated.
import type { PromptSegments } from "@attr-rag/core";
import type { ContextHandle } from "./contextHandle.js";
import { EngineArgumentError } from "./errors.js";
import type { ForcedOptions, ForcedResult } from "./forced.js";
import {
  isApproximate,
  isTokenSegments,
  type ApproximateStrategy,
  type OcclusionCounters,
  type OcclusionOptions,
  type OcclusionResult,
  type OcclusionStrategy,
} from "./occlude.js";
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
  /** Recompute windows of the approximate caches (the screening pass, and an approximate `regenerate`). */
  gapTokens?: number;
  tailTokens?: number;
  /** Use this A_full instead of generating it. */
  givenFull?: { tokens: Int32Array; endedWithEog: boolean };
  signal?: AbortSignal;
  /** Each A_full token as it is generated. */
  onFullToken?: (token: number) => void;
  /** A block's answer is final (block index): screened blocks after the screening pass, the others as regenerated. */
  onSequenceDone?: (block: number) => void;
}

export interface ScreenResult extends OcclusionResult {
  /** Per block: log P(A_full | all sets) − log P(A_full | without the set), from the screening pass. */
  drops: number[];
  /** Blocks regenerated, in block order, and blocks screened out (their answer is A_full). */
  regenerated: number[];
  screened: number[];
  /** Work of the screening pass alone, and of A_full alone (both included in `counters`). */
  screenCounters: OcclusionCounters;
  fullCounters: OcclusionCounters;
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

/** The screening cache a context uses: kv-reuse, or kv-mask where cells are shared (a unified KV cache). */
export function screeningStrategy(kvUnified: boolean): ApproximateStrategy {
  return kvUnified ? "kv-mask" : "kv-reuse";
}

/** A screen runs other jobs on its context: occlusion (the regenerated sets) and a forced pass (the screen). */
export interface ScreenContext extends ContextHandle {
  occlude(options: OcclusionOptions): Promise<OcclusionResult>;
  forced(options: ForcedOptions): Promise<ForcedResult>;
}

export async function screenOcclusion(ctx: ScreenContext, o: ScreenOptions): Promise<ScreenResult> {
  if (o.threshold !== undefined && o.topK !== undefined) throw new EngineArgumentError("give threshold or topK, not both");
  const segments = isTokenSegments(o.segments) ? o.segments : ctx.tokenize(o.segments);
  const common = { segments, ...(o.maxTokens !== undefined ? { maxTokens: o.maxTokens } : {}), ...(o.stop ? { stop: o.stop } : {}), ...(o.signal ? { signal: o.signal } : {}) };
  const windows = { ...(o.gapTokens !== undefined ? { gapTokens: o.gapTokens } : {}), ...(o.tailTokens !== undefined ? { tailTokens: o.tailTokens } : {}) };
  const first = await ctx.occlude({ ...common, occlude: [], strategy: "prefix-shared", ...(o.givenFull ? { givenFull: o.givenFull } : {}), ...(o.onFullToken ? { onFullToken: o.onFullToken } : {}) });
  const full = first.full;
  const blocks = segments.blocks.map((_, j) => j);
  const screenWith = o.screenWith ?? screeningStrategy(ctx.info.kvUnified);
  const screen = await ctx.forced({ segments, strategy: screenWith, ...windows, full: full.tokens, forced: blocks.map(() => full.tokens), ...(o.signal ? { signal: o.signal } : {}) });
  const drops = screen.perSet.map((p) => screen.fullLogProb - p.logProb);
  const regenerated = chooseRegenerated(drops, o);
  const screened = blocks.filter((j) => !regenerated.includes(j));
  for (const j of screened) o.onSequenceDone?.(j);
  let counters = addCounters(first.counters, screen.counters);
  const answers = new Map<number, GeneratedSequence>();
  if (regenerated.length > 0) {
    const regenerate = o.regenerate ?? "speculative";
    const again = await ctx.occlude({
      ...common,
      ...(isApproximate(regenerate) ? windows : {}),
      occlude: regenerated,
      strategy: regenerate,
      givenFull: { tokens: full.tokens, endedWithEog: full.finish === "eog" },
      ...(o.onSequenceDone ? { onSequenceDone: (k: number) => o.onSequenceDone!(regenerated[k]!) } : {}),
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
    fullCounters: first.counters,
  };
}
