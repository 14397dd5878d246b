import { EngineStrategy, type GenerationOptions } from "@attr-rag/contracts";
import type { OcclusionStrategy } from "@attr-rag/engine";
import { invalidJob } from "./jobFailure.js";

const DEFAULT_MAX_TOKENS = 512;

/** An engine occlusion strategy, or `screen` (approximate: screen every set, regenerate a few). */
export type JobStrategy = OcclusionStrategy | "screen";

export interface JobScreen {
  threshold?: number;
  topK?: number;
  /** Strategy that regenerates the chosen sets. */
  regenerate: OcclusionStrategy;
}

export interface JobGeneration {
  maxTokens: number;
  strategy: JobStrategy;
  /** Approximate strategies' recompute windows (undefined: the engine's defaults). */
  gapTokens?: number;
  tailTokens?: number;
  /** Set exactly when the strategy is screen. */
  screen?: JobScreen;
}

/** A job's max tokens and occlusion strategy (unset: 512 tokens, speculative, the engine's defaults). */
export function generationOptions(g: GenerationOptions | undefined): JobGeneration {
  const maxTokens = g?.maxTokens ?? DEFAULT_MAX_TOKENS;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw invalidJob(`generation.max_tokens must be a positive integer, got ${maxTokens}`);
  if (g?.recomputeTail === 0) throw invalidJob("generation.recompute_tail must be ≥ 1 (the last prompt token starts the answer)");
  const strategy = strategyOf(g?.strategy ?? EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED);
  if (strategy !== "screen" && g?.screen !== undefined) throw invalidJob(`generation.screen applies to the SCREEN strategy, not ${strategy}`);
  return {
    maxTokens,
    strategy,
    ...(g?.recomputeGap !== undefined ? { gapTokens: g.recomputeGap } : {}),
    ...(g?.recomputeTail !== undefined ? { tailTokens: g.recomputeTail } : {}),
    ...(strategy === "screen" ? { screen: screenOf(g?.screen) } : {}),
  };
}

function screenOf(s: GenerationOptions["screen"]): JobScreen {
  const problem = screenOptionsProblem(s);
  if (problem) throw invalidJob(problem);
  const regenerate = strategyOf(s?.regenerate ?? EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED) as OcclusionStrategy;
  return { ...(s?.threshold !== undefined ? { threshold: s.threshold } : {}), ...(s?.topK !== undefined ? { topK: s.topK } : {}), regenerate };
}

/** What is wrong with SCREEN's options, for the gateway (request) and the worker (job) alike; undefined if nothing. */
export function screenOptionsProblem(s: GenerationOptions["screen"]): string | undefined {
  if (s?.threshold !== undefined && s.topK !== undefined) return "generation.screen: give threshold or top_k, not both";
  if (s?.threshold !== undefined && !Number.isFinite(s.threshold)) return `generation.screen.threshold must be a finite number, got ${s.threshold}`;
  if (s?.regenerate === EngineStrategy.ENGINE_STRATEGY_SCREEN) return "generation.screen.regenerate cannot be SCREEN; use SPECULATIVE (exact, the default) or KV_REUSE";
  return undefined;
}

/** A job's strategy (unset: speculative). */
export function strategyOf(s: EngineStrategy): JobStrategy {
  if (s === EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED) return "speculative";
  const name = strategyNameOf(s);
  if (name === undefined) throw invalidJob(`generation.strategy ${String(s)} is not a defined EngineStrategy`);
  return name;
}

const TO_PROTO: Record<JobStrategy, EngineStrategy> = {
  naive: EngineStrategy.ENGINE_STRATEGY_NAIVE,
  "prefix-shared": EngineStrategy.ENGINE_STRATEGY_PREFIX_SHARED,
  speculative: EngineStrategy.ENGINE_STRATEGY_SPECULATIVE,
  "kv-reuse": EngineStrategy.ENGINE_STRATEGY_KV_REUSE,
  "kv-mask": EngineStrategy.ENGINE_STRATEGY_KV_MASK,
  screen: EngineStrategy.ENGINE_STRATEGY_SCREEN,
};

/** Every strategy name, in EngineStrategy order (what the CLI accepts). */
export const JOB_STRATEGIES = Object.keys(TO_PROTO) as JobStrategy[];

export function strategyToProto(s: JobStrategy): EngineStrategy {
  return TO_PROTO[s];
}

export { isApproximateProto } from "@attr-rag/contracts";

/** The strategy's CLI name (`kv-reuse`, …); undefined for UNSPECIFIED or an unknown value. */
export function strategyNameOf(s: EngineStrategy): JobStrategy | undefined {
  return JOB_STRATEGIES.find((k) => TO_PROTO[k] === s);
}
