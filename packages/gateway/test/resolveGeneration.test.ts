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
});
