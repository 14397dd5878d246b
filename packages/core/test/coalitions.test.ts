import { describe, expect, it } from "vitest";
import {
  attributeCoalitions,
  betaPositionWeights,
  checkCoalitionOptions,
  CoalitionGame,
  exactSemivalue,
  SeededRandom,
  shapleyPositionWeights,
  type Coalition,
  type CoalitionMethod,
  type CoalitionOptions,
} from "../src/index.js";

type Game = (c: Coalition) => number;
const utilityOf = (v: Game) => async (cs: readonly Coalition[]) => cs.map(v);

/** A game with linear terms, pairwise interactions (synergy > 0, redundancy < 0) and one three-way term. */
function interactionGame(n: number, seed: number): Game {
  const r = new SeededRandom(seed);
  const a = Array.from({ length: n }, () => r.next() * 4 - 1);
  const pairs = Array.from({ length: n }, () => [r.below(n), r.below(n), r.next() * 6 - 3] as const).filter(([i, j]) => i !== j);
  return (c) => {
    const s = new Set(c);
    let x = -10;
    for (const i of c) x += a[i]!;
    for (const [i, j, w] of pairs) if (s.has(i) && s.has(j)) x += w;
    if (s.has(3) && s.has(5) && s.has(6)) x -= 3;
    return x;
  };
}

const shapley = async (n: number, v: Game) => (await attributeCoalitions(n, utilityOf(v), { method: "shapley" })).scores;
const sum = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0);
const maxAbsDiff = (a: readonly number[], b: readonly number[]) => Math.max(...a.map((x, i) => Math.abs(x - b[i]!)));

describe("coalition attribution on constructed games (no model)", () => {
  it("coalitions - exact Shapley has efficiency, symmetry, dummy and linearity", async () => {
    const n = 7;
    const base = interactionGame(n, 1);
    // Players 1 and 4 enter symmetrically, player 6 is a dummy.
    const v: Game = (c) => {
      const s = new Set(c);
      const rest = c.filter((i) => i !== 1 && i !== 4 && i !== 6);
      const k = (s.has(1) ? 1 : 0) + (s.has(4) ? 1 : 0);
      return base(rest) + 2 * k + (k === 2 ? -1.5 : 0);
    };
    const w = interactionGame(n, 2);
    const phi = await shapley(n, v);
    expect(Math.abs(sum(phi) - (v([0, 1, 2, 3, 4, 5, 6]) - v([])))).toBeLessThan(1e-9);
    expect(Math.abs(phi[1]! - phi[4]!)).toBeLessThan(1e-12);
    expect(Math.abs(phi[6]!)).toBeLessThan(1e-12);
    const [phiW, phiSum, phiScaled] = await Promise.all([shapley(n, w), shapley(n, (c) => v(c) + w(c)), shapley(n, (c) => -2.5 * v(c))]);
    expect(maxAbsDiff(phiSum, phi.map((x, i) => x + phiW[i]!))).toBeLessThan(1e-9);
    expect(maxAbsDiff(phiScaled, phi.map((x) => -2.5 * x))).toBeLessThan(1e-9);
    // An additive game's Shapley values are its weights, and so are leave-one-out's.
    const weights = [3, -1, 0.5, 0, 2, -4, 1];
    const additive: Game = (c) => 7 + sum(c.map((i) => weights[i]!));
    expect(maxAbsDiff(await shapley(n, additive), weights)).toBeLessThan(1e-12);
    expect(maxAbsDiff((await attributeCoalitions(n, utilityOf(additive), { method: "leave-one-out" })).scores, weights)).toBeLessThan(1e-12);
  });

  it("coalitions - redundancy and synergy: Shapley splits what leave-one-out misses", async () => {
    // Sets 0 and 1 say the same thing (either is enough); 2 and 3 are the two hops of one answer (both needed).
    const v: Game = (c) => (c.includes(0) || c.includes(1) ? 4 : 0) + (c.includes(2) && c.includes(3) ? 6 : 0);
    const loo = (await attributeCoalitions(5, utilityOf(v), { method: "leave-one-out" })).scores;
    const phi = await shapley(5, v);
    expect(loo.slice(0, 2)).toEqual([0, 0]);
    expect(phi.map((x) => Math.round(x * 1e9) / 1e9)).toEqual([2, 2, 3, 3, 0]);
    expect(loo.slice(2, 4)).toEqual([6, 6]);
  });

  it("coalitions - Kernel SHAP with every coalition equals exact Shapley (1e-9)", async () => {
    for (const [n, seed] of [[2, 4], [5, 5], [9, 6]] as const) {
      const v = interactionGame(n, seed);
      const exact = await shapley(n, v);
      const kernel = await attributeCoalitions(n, utilityOf(v), { method: "kernel-shap", samples: 2 ** n - 2 });
      expect(maxAbsDiff(kernel.scores, exact)).toBeLessThan(1e-9);
      expect(kernel.utilityCalls).toBe(2 ** n);
    }
  });

  it("coalitions - Beta(1, 1) weights are Shapley's; Beta(16, 1) favours joining small coalitions", () => {
    for (const n of [1, 4, 10]) {
      expect(maxAbsDiff(betaPositionWeights(n, 1, 1), shapleyPositionWeights(n))).toBeLessThan(1e-12);
      expect(Math.abs(sum(betaPositionWeights(n, 16, 1)) - 1)).toBeLessThan(1e-12);
      expect(Math.abs(sum(betaPositionWeights(n, 0.5, 3)) - 1)).toBeLessThan(1e-12);
    }
    const p = betaPositionWeights(10, 16, 1);
    for (let j = 1; j < 10; j++) expect(p[j]!).toBeLessThan(p[j - 1]!);
  });

  // Relative error = max |φ̂ − φ| / max |φ| over 3 seeds, on a 10-set game with interactions (14 sets for
  // Kernel SHAP, so 4,096 samples stay below its 16,382 proper coalitions). Stated tolerances at 4,096.
  const convergence: [string, CoalitionOptions, number, "shapley" | "beta16", number][] = [
    ["Kernel SHAP", { method: "kernel-shap" }, 14, "shapley", 0.03],
    ["TMC-Shapley without truncation", { method: "tmc-shapley", truncation: 0 }, 10, "shapley", 0.03],
    ["TMC-Shapley (default truncation 0.01)", { method: "tmc-shapley" }, 10, "shapley", 0.04],
    ["Beta(1, 1)-Shapley", { method: "beta-shapley", betaAlpha: 1, betaBeta: 1 }, 10, "shapley", 0.03],
    ["Beta(16, 1)-Shapley", { method: "beta-shapley" }, 10, "beta16", 0.08],
  ];
  for (const [name, options, n, target, tolerance] of convergence) {
    it(`coalitions - ${name} converges to the exact value as the budget grows (≤ ${tolerance} relative at 4,096)`, async () => {
      const v = interactionGame(n, 3);
      const game = new CoalitionGame(n, utilityOf(v));
      const exact = (await exactSemivalue(game, target === "shapley" ? shapleyPositionWeights(n) : betaPositionWeights(n, 16, 1))).scores;
      const scale = Math.max(...exact.map(Math.abs));
      const error = async (samples: number) => {
        let worst = 0;
        let mean = 0;
        for (const seed of [0, 1, 2]) {
          const r = await attributeCoalitions(n, utilityOf(v), { ...options, samples, seed });
          const e = maxAbsDiff(r.scores, exact) / scale;
          worst = Math.max(worst, e);
          mean += e / 3;
        }
        return { worst, mean };
      };
      const [e64, e1024, e4096] = [await error(64), await error(1024), await error(4096)];
      expect(e1024.mean).toBeLessThan(e64.mean);
      expect(e4096.mean).toBeLessThan(e64.mean / 2);
      expect(e4096.worst).toBeLessThanOrEqual(tolerance);
    });
  }

  it("coalitions - ContextCite recovers a sparse additive game and reports its LDS on held-out ablations", async () => {
    const weights = [5, 0, 0, -3, 0, 0, 2, 0, 0, 0];
    const v: Game = (c) => -20 + sum(c.map((i) => weights[i]!));
    const r = await attributeCoalitions(10, utilityOf(v), { method: "contextcite", samples: 64, seed: 9 });
    expect(maxAbsDiff(r.scores, weights)).toBeLessThan(0.2);
    expect(r.scores.filter((x, i) => weights[i] === 0 && x !== 0).length).toBeLessThanOrEqual(2);
    expect(r.lds!).toBeGreaterThan(0.95);
    // With interactions a linear surrogate is only approximate: the LDS says so.
    const rough = await attributeCoalitions(10, utilityOf(interactionGame(10, 3)), { method: "contextcite", samples: 64, seed: 9 });
    expect(rough.lds!).toBeLessThan(r.lds!);
  });

  it("coalitions - every coalition is scored once, in batches; sampling is reproducible by seed", async () => {
    const v = interactionGame(8, 8);
    const methods: CoalitionMethod[] = ["leave-one-out", "shapley", "kernel-shap", "tmc-shapley", "beta-shapley", "contextcite"];
    for (const method of methods) {
      const asked: string[] = [];
      let batches = 0;
      const utility = async (cs: readonly Coalition[]) => {
        batches++;
        asked.push(...cs.map((c) => c.join(",")));
        return cs.map(v);
      };
      const r = await attributeCoalitions(8, utility, { method, samples: 200, seed: 3 });
      expect(new Set(asked).size, method).toBe(asked.length);
      expect(r.utilityCalls, method).toBe(asked.length);
      expect(batches, method).toBeLessThanOrEqual(method === "tmc-shapley" || method === "beta-shapley" ? 9 : 2);
      const again = await attributeCoalitions(8, utilityOf(v), { method, samples: 200, seed: 3 });
      expect(again.scores, method).toEqual(r.scores);
      if (method !== "leave-one-out" && method !== "shapley") {
        const other = await attributeCoalitions(8, utilityOf(v), { method, samples: 200, seed: 4 });
        expect(other.scores, method).not.toEqual(r.scores);
      }
    }
    expect((await attributeCoalitions(8, utilityOf(v), { method: "leave-one-out" })).utilityCalls).toBe(9);
    expect((await attributeCoalitions(8, utilityOf(v), { method: "shapley" })).utilityCalls).toBe(256);
  });

  it("coalitions - TMC and Beta report standard errors that shrink with the budget", async () => {
    const v = interactionGame(10, 3);
    for (const method of ["tmc-shapley", "beta-shapley"] as const) {
      const small = await attributeCoalitions(10, utilityOf(v), { method, samples: 64, seed: 1 });
      const large = await attributeCoalitions(10, utilityOf(v), { method, samples: 4096, seed: 1 });
      expect(small.stdErrors).toHaveLength(10);
      expect(sum(large.stdErrors!)).toBeLessThan(sum(small.stdErrors!) / 4);
    }
  });

  it("coalitions - bad options are refused naming the limit; a bad utility is an error, not a score", async () => {
    expect(() => checkCoalitionOptions({ method: "shapley" }, 13)).toThrow(/at most 12 chunk sets, got 13/);
    expect(() => checkCoalitionOptions({ method: "kernel-shap", samples: 0 }, 5)).toThrow(/samples must be an integer in \[1, 65536\], got 0/);
    expect(() => checkCoalitionOptions({ method: "kernel-shap", samples: 1e9 }, 5)).toThrow(/\[1, 65536\]/);
    expect(() => checkCoalitionOptions({ method: "beta-shapley", betaAlpha: 0 }, 5)).toThrow(/beta alpha must be a number in \(0, 1e6\], got 0/);
    expect(() => checkCoalitionOptions({ method: "beta-shapley", betaBeta: -1 }, 5)).toThrow(/beta beta/);
    expect(() => checkCoalitionOptions({ method: "nope" as CoalitionMethod }, 5)).toThrow(/unknown attribution method "nope"/);
    expect(() => checkCoalitionOptions({ method: "kernel-shap" }, 0)).toThrow(/at least one chunk set/);
    await expect(attributeCoalitions(3, async (cs) => cs.map(() => Number.NaN), { method: "leave-one-out" })).rejects.toThrow(/not a finite number/);
    await expect(attributeCoalitions(3, async () => [1], { method: "leave-one-out" })).rejects.toThrow(/returned 1 values for 4 coalitions/);
  });
});
