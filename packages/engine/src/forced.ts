import type { PromptSegments } from "@attr-rag/core";
import type { ContextHandle } from "./contextHandle.js";
import { EngineArgumentError } from "./errors.js";
import type { NativeContext, NativeForcedStats, NativeOcclusionCounters } from "./native/addonTypes.js";
import { isApproximate, isTokenSegments, occlusionRequest, type ApproximateStrategy } from "./occlude.js";
import type { TokenSegments } from "./tokenSegments.js";

export interface ForcedOptions {
  segments: PromptSegments | TokenSegments;
  /** The cache approximation to measure or screen with. */
  strategy: ApproximateStrategy;
  gapTokens?: number;
  tailTokens?: number;
  /** A_full (its log-probability under the full prompt is returned as the baseline). */
  full: Int32Array;
  /** Blocks to occlude (default: every block). */
  occlude?: readonly number[];
  /** Tokens to teacher-force per occluded block, parallel to `occlude`. */
  forced: readonly Int32Array[];
  /** Also force an exact cache alongside and compare next-token distributions (KL, top-1 agreement). */
  pairExact?: boolean;
  maxParallel?: number;
  signal?: AbortSignal;
}

export interface ForcedResult {
  /** Σ log P(A_full | full prompt). */
  fullLogProb: number;
  /** Per occluded block, in the order of `occlude`. */
  perSet: NativeForcedStats[];
  occludedBlocks: number[];
  counters: NativeOcclusionCounters;
}

/**
 * Teacher-forced passes over approximate occluded caches (APPROXIMATE: the cache after the occluded set is
 * reused, see native/src/KvReuse.h): log P(forced | prompt without S_j) for every j in one batched pass, and,
 * with pairExact, how far those caches' next-token distributions are from exact ones.
 */
export async function runForced(context: ContextHandle, native: NativeContext, o: ForcedOptions): Promise<ForcedResult> {
  if (!isApproximate(o.strategy)) throw new EngineArgumentError(`forced passes measure an approximate strategy (kv-reuse or kv-mask), got "${o.strategy}"`);
  const segments = isTokenSegments(o.segments) ? o.segments : context.tokenize(o.segments);
  if (segments.suffix.length === 0) throw new EngineArgumentError("forced passes need a prompt with a suffix (instruction or answer header)");
  const occlude = o.occlude ?? segments.blocks.map((_, i) => i);
  if (o.forced.length !== occlude.length) throw new EngineArgumentError(`forced has ${o.forced.length} token lists for ${occlude.length} occluded sets`);
  const longest = Math.max(0, ...o.forced.map((f) => f.length));
  o.forced.forEach((f, i) => context.model.checkTokens(f, `forced[${i}]`));
  const request = occlusionRequest(context, native, segments, {
    ...o,
    occlude,
    maxTokens: Math.max(1, longest, o.full.length),
    givenFull: { tokens: o.full, endedWithEog: false },
  });
  const raw = await native.occlude({ ...request, forced: [...o.forced], pairExact: o.pairExact ?? false });
  return { fullLogProb: raw.fullLogProb ?? 0, perSet: raw.forced ?? occlude.map(() => ({ steps: 0, logProb: 0, exactLogProb: 0, kl: 0, top1Agree: 0 })), occludedBlocks: [...occlude], counters: raw.counters };
}
