import { EngineStrategy, type GenerationOptions } from "@attr-rag/contracts";
import type { OcclusionStrategy } from "@attr-rag/engine";
import { invalidJob } from "./jobFailure.js";

const DEFAULT_MAX_TOKENS = 512;

export interface JobGeneration {
  maxTokens: number;
  strategy: OcclusionStrategy;
  /** Approximate strategies' recompute windows (undefined: the engine's defaults). */
  gapTokens?: number;
  tailTokens?: number;
}

/** A job's max tokens and occlusion strategy (unset: 512 tokens, speculative, the engine's defaults). */
export function generationOptions(g: GenerationOptions | undefined): JobGeneration {
  const maxTokens = g?.maxTokens ?? DEFAULT_MAX_TOKENS;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw invalidJob(`generation.max_tokens must be a positive integer, got ${maxTokens}`);
  if (g?.recomputeTail === 0) throw invalidJob("generation.recompute_tail must be ≥ 1 (the last prompt token starts the answer)");
  return {
    maxTokens,
    strategy: strategyOf(g?.strategy ?? EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED),
    ...(g?.recomputeGap !== undefined ? { gapTokens: g.recomputeGap } : {}),
    ...(g?.recomputeTail !== undefined ? { tailTokens: g.recomputeTail } : {}),
  };
}

export function strategyOf(s: EngineStrategy): OcclusionStrategy {
  switch (s) {
    case EngineStrategy.ENGINE_STRATEGY_NAIVE:
      return "naive";
    case EngineStrategy.ENGINE_STRATEGY_PREFIX_SHARED:
      return "prefix-shared";
    case EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED:
    case EngineStrategy.ENGINE_STRATEGY_SPECULATIVE:
      return "speculative";
    case EngineStrategy.ENGINE_STRATEGY_KV_REUSE:
      return "kv-reuse";
    case EngineStrategy.ENGINE_STRATEGY_KV_MASK:
      return "kv-mask";
    default:
      throw invalidJob(`generation.strategy ${String(s)} is not a defined EngineStrategy`);
  }
}

const TO_PROTO: Record<OcclusionStrategy, EngineStrategy> = {
  naive: EngineStrategy.ENGINE_STRATEGY_NAIVE,
  "prefix-shared": EngineStrategy.ENGINE_STRATEGY_PREFIX_SHARED,
  speculative: EngineStrategy.ENGINE_STRATEGY_SPECULATIVE,
  "kv-reuse": EngineStrategy.ENGINE_STRATEGY_KV_REUSE,
  "kv-mask": EngineStrategy.ENGINE_STRATEGY_KV_MASK,
};

export function strategyToProto(s: OcclusionStrategy): EngineStrategy {
  return TO_PROTO[s];
}
