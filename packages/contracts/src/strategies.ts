import { EngineStrategy } from "./gen/attr_rag/v1/engine.js";

/** KV_REUSE, KV_MASK and SCREEN: results that may differ from exact occlusion (reports must say so). */
export function isApproximateProto(s: EngineStrategy | undefined): boolean {
  return s === EngineStrategy.ENGINE_STRATEGY_KV_REUSE || s === EngineStrategy.ENGINE_STRATEGY_KV_MASK || s === EngineStrategy.ENGINE_STRATEGY_SCREEN;
}
