import type { PromptSegments } from "@attr-rag/core";
import type { ContextHandle } from "./contextHandle.js";
import { EngineArgumentError, EngineLimitError } from "./errors.js";
import type { NativeAnswerScores, NativeContext, NativeOcclusionCounters, NativeOcclusionRequest, NativeSequence } from "./native/addonTypes.js";
import { decodeAnswer, type GeneratedSequence } from "./sequenceText.js";
import { segmentsLength, type TokenSegments } from "./tokenSegments.js";

/** In the native addon's numbering; the last two are approximate (opt-in, never a default). */
export const OCCLUSION_STRATEGIES = ["naive", "prefix-shared", "speculative", "kv-reuse", "kv-mask"] as const;
export type OcclusionStrategy = (typeof OCCLUSION_STRATEGIES)[number];
export const EXACT_STRATEGIES = ["naive", "prefix-shared", "speculative"] as const;
export const APPROXIMATE_STRATEGIES = ["kv-reuse", "kv-mask"] as const;
export type ApproximateStrategy = (typeof APPROXIMATE_STRATEGIES)[number];

export function isApproximate(s: string): s is ApproximateStrategy {
  return (APPROXIMATE_STRATEGIES as readonly string[]).includes(s);
}

export interface OcclusionOptions {
  /** The prompt: text segments (tokenized with the context's model) or token segments. */
  segments: PromptSegments | TokenSegments;
  /** Blocks to occlude (default: every block). */
  occlude?: readonly number[];
  /** Max new tokens per answer. Default 512 (SPEC). */
  maxTokens?: number;
  /** Answers stop at the first of these strings (the text is cut before it). */
  stop?: readonly string[];
  /**
   * naive: every prompt alone on a cleared cache (the reference); prefix-shared: shared prefix KV and batched
   * decoding; speculative (default): prefix-shared plus A_full as a draft for every occluded answer.
   */
  strategy?: OcclusionStrategy;
  /**
   * Approximate strategies: prompt tokens recomputed right after the occluded set (needs a unified KV cache and
   * kv-mask; default 0) and at the end of the prompt (default: the suffix, i.e. instruction and answer header).
   * When the two cover everything after the set, the answer is exact.
   */
  gapTokens?: number;
  tailTokens?: number;
  /** First draft window (tokens) and its cap; the window doubles while drafts are accepted. */
  draftInitial?: number;
  draftMax?: number;
  /** Occluded sequences per wave (default: as many as the context's sequences and KV cells allow). */
  maxParallel?: number;
  /**
   * Exact strategies: also teacher-force A_full after every occluded prompt (reusing its KV cells; speculative
   * verifies A_full as its first draft), after the full prompt and after the prompt without any set, for
   * sentence-level attribution: `answerScores` in the result.
   */
  scoreAnswer?: boolean;
  /** Use this A_full instead of generating it (e.g. when jobs are split across workers). */
  givenFull?: { tokens: Int32Array; endedWithEog: boolean };
  signal?: AbortSignal;
  /** Each A_full token as it is generated. */
  onFullToken?: (token: number) => void;
  /** An occluded answer (index into `occlude`) finished. */
  onSequenceDone?: (index: number) => void;
}

export type OcclusionCounters = NativeOcclusionCounters;

export interface OcclusionResult {
  full: GeneratedSequence;
  /** One per occluded block, in the order of `occlude`. */
  occluded: GeneratedSequence[];
  /** Block index of each occluded answer. */
  occludedBlocks: number[];
  counters: OcclusionCounters;
  strategy: OcclusionStrategy;
  /** scoreAnswer: log P(A_full[i] | prompt) for every token of full.tokens. */
  answerScores?: NativeAnswerScores;
}

export function isTokenSegments(s: PromptSegments | TokenSegments): s is TokenSegments {
  return s.prefix instanceof Int32Array;
}

export async function runOcclusion(context: ContextHandle, native: NativeContext, o: OcclusionOptions): Promise<OcclusionResult> {
  const segments = isTokenSegments(o.segments) ? o.segments : context.tokenize(o.segments);
  const request = occlusionRequest(context, native, segments, o);
  const stops = request.stops;
  const raw = await native.occlude(request, (kind, index, token) => {
    if (kind === 0) o.onFullToken?.(token);
    else o.onSequenceDone?.(index);
  });
  const decode = (s: NativeSequence) => decodeAnswer(context.model, s, stops);
  return {
    full: decode(raw.full),
    occluded: raw.occluded.map(decode),
    occludedBlocks: [...request.occlude],
    counters: raw.counters,
    strategy: OCCLUSION_STRATEGIES[request.strategy]!,
    ...(raw.scores ? { answerScores: raw.scores } : {}),
  };
}

/** Validates everything llama.cpp would assert on, and builds the native request. */
export function occlusionRequest(context: ContextHandle, native: NativeContext, s: TokenSegments, o: OcclusionOptions): NativeOcclusionRequest {
  const model = context.model;
  if (s.blocks.length === 0) throw new EngineArgumentError("occlusion needs at least one context set; there is nothing to occlude");
  s.blocks.forEach((b, i) => {
    if (b.length === 0) throw new EngineArgumentError(`context set ${i} is empty; drop empty sets before occlusion`);
  });
  if (s.prefix.length + s.suffix.length === 0) throw new EngineArgumentError("the prompt has no question or instruction tokens");
  model.checkTokens(s.prefix, "prefix");
  model.checkTokens(s.suffix, "suffix");
  s.blocks.forEach((b, i) => model.checkTokens(b, `context set ${i}`));
  const maxTokens = o.maxTokens ?? 512;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new EngineArgumentError(`maxTokens must be an integer ≥ 1, got ${maxTokens}`);
  const strategy = OCCLUSION_STRATEGIES.indexOf(o.strategy ?? "speculative");
  if (strategy < 0) throw new EngineArgumentError(`unknown strategy "${o.strategy}"; use ${OCCLUSION_STRATEGIES.join(", ")}`);
  if (o.scoreAnswer) {
    if (isApproximate(OCCLUSION_STRATEGIES[strategy]!)) {
      throw new EngineArgumentError(`scoring A_full per token needs an exact strategy (${EXACT_STRATEGIES.join(", ")}), not the approximate ${OCCLUSION_STRATEGIES[strategy]}`);
    }
    if (s.suffix.length === 0) throw new EngineArgumentError("scoring A_full per token needs a prompt with a suffix (the answer header)");
    if (o.givenFull && o.givenFull.tokens.length > maxTokens) {
      throw new EngineArgumentError(`scoring a given A_full of ${o.givenFull.tokens.length} tokens needs maxTokens ≥ its length (got ${maxTokens}): its KV cells are sized by maxTokens`);
    }
  }
  const occlude = o.occlude ?? s.blocks.map((_, i) => i);
  if (new Set(occlude).size !== occlude.length || occlude.some((j) => !Number.isInteger(j) || j < 0 || j >= s.blocks.length)) {
    throw new EngineArgumentError(`occlude must list distinct block indices in [0, ${s.blocks.length}), got [${occlude.join(", ")}]`);
  }
  const draftInitial = o.draftInitial ?? 16;
  const draftMax = o.draftMax ?? 128;
  if (!Number.isInteger(draftInitial) || draftInitial < 1 || !Number.isInteger(draftMax) || draftMax < draftInitial) {
    throw new EngineArgumentError(`draft windows must be integers with 1 ≤ draftInitial ≤ draftMax, got ${draftInitial} and ${draftMax}`);
  }
  const gapTokens = o.gapTokens ?? 0;
  const tailTokens = o.tailTokens ?? s.suffix.length;
  if (!Number.isInteger(gapTokens) || gapTokens < 0) throw new EngineArgumentError(`gapTokens must be an integer ≥ 0, got ${gapTokens}`);
  if (!Number.isInteger(tailTokens) || tailTokens < 1) throw new EngineArgumentError(`tailTokens must be an integer ≥ 1, got ${tailTokens}`);
  const name = OCCLUSION_STRATEGIES[strategy]!;
  if (isApproximate(name)) {
    const why = reuseUnsupported(name, context.info.kvUnified, gapTokens);
    if (why) throw new EngineLimitError(why);
  }
  const maxParallel = o.maxParallel ?? 0;
  if (!Number.isInteger(maxParallel) || maxParallel < 0) throw new EngineArgumentError(`maxParallel must be an integer ≥ 0, got ${maxParallel}`);
  const stops = [...(o.stop ?? [])];
  if (stops.some((x) => typeof x !== "string" || x === "")) throw new EngineArgumentError("stop strings must be non-empty strings");
  if (o.givenFull) model.checkTokens(o.givenFull.tokens, "givenFull");

  const { sequences } = context.options;
  const { sequenceCells, kvUnified } = context.info;
  const where = kvUnified ? "the context has" : "each sequence's KV stream has";
  const promptLength = segmentsLength(s);
  if (promptLength + maxTokens + 1 > sequenceCells) {
    throw new EngineLimitError(
      `the prompt has ${promptLength} tokens; with ${maxTokens} new tokens it needs ${promptLength + maxTokens + 1} KV cells but ${where} ${sequenceCells}; ` +
        "use a larger contextSize, fewer or shorter chunk sets, or fewer max tokens",
    );
  }
  if (strategy > 0 && sequences < 2) {
    throw new EngineLimitError(`the ${OCCLUSION_STRATEGIES[strategy]} strategy needs a context with sequences ≥ 2 (it has ${sequences})`);
  }
  const request: NativeOcclusionRequest = {
    prefix: s.prefix,
    blocks: [...s.blocks],
    suffix: s.suffix,
    occlude: Int32Array.from(occlude),
    maxTokens,
    stops,
    strategy,
    draftInitial,
    draftMax,
    maxParallel,
    gapTokens,
    tailTokens,
    ...(o.givenFull ? { givenFull: o.givenFull.tokens, givenFullEndsWithEog: o.givenFull.endedWithEog } : {}),
    ...(o.scoreAnswer ? { scoreAnswer: true } : {}),
  };
  const cells = native.cellsNeeded(request, 1);
  if (cells > sequenceCells) {
    throw new EngineLimitError(
      `occlusion needs ${cells} KV cells for the full prompt and one occluded answer, but ${where} ${sequenceCells}; ` +
        "use a larger contextSize, fewer or shorter chunk sets, or fewer max tokens",
    );
  }
  return request;
}

/** Why an approximate strategy cannot run on this cache layout (llama.cpp's constraints, see native/src/KvReuse.h). */
export function reuseUnsupported(strategy: ApproximateStrategy, kvUnified: boolean, gapTokens: number): string | undefined {
  if (strategy === "kv-reuse" && kvUnified) {
    return "kv-reuse shifts the kept cells' positions, which a unified KV cache shares with the full prompt; use a context with per-sequence KV streams (kvUnified: false, the default) or kv-mask";
  }
  if (gapTokens > 0 && !kvUnified) {
    return "recomputing tokens right after the occluded set (gapTokens > 0) needs a unified KV cache, because llama.cpp only accepts a sequence's new tokens after its last cached position; use gapTokens 0, or kv-mask on a context with kvUnified: true";
  }
  return undefined;
}
