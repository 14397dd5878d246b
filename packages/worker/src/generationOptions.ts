import { EngineStrategy, type GenerationOptions } from "@attr-rag/contracts";
import type { OcclusionStrategy } from "@attr-rag/engine";
import { invalidJob } from "./jobFailure.js";

const DEFAULT_MAX_TOKENS = 512;

/** A job's max tokens and occlusion strategy (unset: 512 tokens, speculative, the engine's defaults). */
export function generationOptions(g: GenerationOptions | undefined): { maxTokens: number; strategy: OcclusionStrategy } {
  const maxTokens = g?.maxTokens ?? DEFAULT_MAX_TOKENS;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw invalidJob(`generation.max_tokens must be a positive integer, got ${maxTokens}`);
  return { maxTokens, strategy: strategyOf(g?.strategy ?? EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED) };
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
    default:
      throw invalidJob(`generation.strategy ${String(s)} is not a defined EngineStrategy`);
  }
}

export function strategyToProto(s: OcclusionStrategy): EngineStrategy {
  return s === "naive" ? EngineStrategy.ENGINE_STRATEGY_NAIVE : s === "prefix-shared" ? EngineStrategy.ENGINE_STRATEGY_PREFIX_SHARED : EngineStrategy.ENGINE_STRATEGY_SPECULATIVE;
}
