import { describe, expect, it } from "vitest";
import { EngineStrategy } from "@attr-rag/contracts";
import { DEFAULT_CONFIG, type GatewayConfig } from "../src/config/gatewayConfig.js";
import { resolveGeneration } from "../src/pipeline/resolveAsk.js";

const config = { ...DEFAULT_CONFIG, store: "/nowhere", model: "m.gguf" } as GatewayConfig;

describe("resolveGeneration", () => {
  it("resolveGeneration - unset means the server's exact default; approximate strategies only when named, with their windows", () => {
    expect(resolveGeneration(undefined, config).strategy).toBe("speculative");
    expect(resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED }, config).strategy).toBe("speculative");
    expect(resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_KV_REUSE, recomputeTail: 40 }, config)).toEqual({
      maxTokens: config.maxTokens,
      strategy: "kv-reuse",
      recomputeTail: 40,
    });
    expect(resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_KV_MASK, recomputeGap: 8 }, config)).toMatchObject({ strategy: "kv-mask", recomputeGap: 8 });
  });

  it("resolveGeneration - recompute windows on an exact strategy, a zero tail and unknown strategies are INVALID_ARGUMENT", () => {
    expect(() => resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_PREFIX_SHARED, recomputeTail: 4 }, config)).toThrow(/apply to the approximate strategies/);
    expect(() => resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED, recomputeGap: 0 }, config)).toThrow(/apply to the approximate strategies/);
    expect(() => resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_KV_REUSE, recomputeTail: 0 }, config)).toThrow(/recompute_tail must be ≥ 1/);
    expect(() => resolveGeneration({ strategy: 42 as EngineStrategy }, config)).toThrow(/not a defined EngineStrategy/);
    let code: number | undefined;
    try {
      resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_NAIVE, recomputeTail: 4 }, config);
    } catch (err) {
      code = (err as { code?: number }).code;
    }
    expect(code).toBe(3); // grpc status INVALID_ARGUMENT
  });

  it("resolveGeneration - screen takes top_k or a threshold and regenerates exactly unless told; its options elsewhere are INVALID_ARGUMENT", () => {
    expect(resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_SCREEN }, config)).toEqual({ maxTokens: config.maxTokens, strategy: "screen", screen: { regenerate: "speculative" } });
    expect(resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_SCREEN, recomputeTail: 9, screen: { topK: 3, regenerate: EngineStrategy.ENGINE_STRATEGY_KV_REUSE } }, config)).toEqual({
      maxTokens: config.maxTokens,
      strategy: "screen",
      recomputeTail: 9,
      screen: { topK: 3, regenerate: "kv-reuse" },
    });
    expect(resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_SCREEN, screen: { threshold: 0.25, regenerate: 0 } }, config).screen).toEqual({ threshold: 0.25, regenerate: "speculative" });
    expect(() => resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_SCREEN, screen: { threshold: 0.25, topK: 2, regenerate: 0 } }, config)).toThrow(/threshold or top_k, not both/);
    expect(() => resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_SCREEN, screen: { threshold: Number.NaN, regenerate: 0 } }, config)).toThrow(/finite number/);
    expect(() => resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_SCREEN, screen: { regenerate: EngineStrategy.ENGINE_STRATEGY_SCREEN } }, config)).toThrow(/cannot be SCREEN/);
    expect(() => resolveGeneration({ strategy: EngineStrategy.ENGINE_STRATEGY_KV_REUSE, screen: { topK: 1, regenerate: 0 } }, config)).toThrow(/applies to the SCREEN strategy, not kv-reuse/);
  });
});
