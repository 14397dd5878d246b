import { describe, expect, it } from "vitest";
import { selectChunkSets, type SelectionInput } from "../src/selection/selectChunkSets.js";

const SIX = ["cosine", "jaccard", "rouge1", "rouge2", "rougeL", "rougeLsum"];

/** Builds input where every metric sees the same α per set, plus optional per-metric overrides. */
function input(alpha: number[], overrides: Record<string, number[]> = {}, metrics = SIX): SelectionInput {
  return {
    sets: alpha.map((_, i) => ({ id: `S${i + 1}`, tokens: 100 })),
    metrics,
    alphas: Object.fromEntries(metrics.map((m) => [m, overrides[m] ?? alpha])),
  };
}

describe("selectChunkSets", () => {
  it("selection - keeps S* and every set above the elbow, drops the rest with reasons", () => {
    // Sets 1 and 3 matter (α ≈ 0.6, 0.5), the rest are noise (≈ 0.05): largest drop 0.5 → 0.07.
    const r = selectChunkSets(input([0.6, 0.07, 0.5, 0.05, 0.04]));
    expect(r.topVoted).toBe(0);
    expect(r.kept).toEqual([0, 2]);
    expect(r.decisions.map((d) => d.reason)).toEqual([
      "top-voted",
      "too-few-votes",
      "selected-by-votes",
      "too-few-votes",
      "too-few-votes",
    ]);
    expect(r.decisions[2]!.selectedBy).toEqual(SIX);
    expect(r.perMetric[0]!.largestDrop).toBeCloseTo(0.43, 12);
    expect(r.perMetric[0]!.dropAfter).toBe(2);
    expect(r.decisions[1]!.explanation).toMatch(/dropped: 0\/6 metrics selected it \(< 3\)/);
  });

  it("selection - S* is the majority argmax even when it is not the top re-ranked set", () => {
    const r = selectChunkSets(
      input([0.2, 0.9, 0.3], { cosine: [0.95, 0.9, 0.3], jaccard: [0.95, 0.9, 0.3] }),
    );
    expect(r.topVoted).toBe(1);
    expect(r.decisions[1]!.argmaxVotes).toEqual(["rouge1", "rouge2", "rougeL", "rougeLsum"]);
    expect(r.decisions[0]!.argmaxVotes).toEqual(["cosine", "jaccard"]);
    expect(r.kept[0]).toBe(1);
  });

  it("selection - a set chosen by exactly minVotes metrics is kept, one fewer is dropped", () => {
    const low = [0.9, 0.1, 0.1];
    const high = [0.9, 0.8, 0.1];
    const three = selectChunkSets(input(low, { cosine: high, jaccard: high, rouge1: high }));
    expect(three.kept).toEqual([0, 1]);
    expect(three.decisions[1]!.selectedBy).toEqual(["cosine", "jaccard", "rouge1"]);
    const two = selectChunkSets(input(low, { cosine: high, jaccard: high }));
    expect(two.kept).toEqual([0]);
    expect(two.decisions[1]!.reason).toBe("too-few-votes");
  });

  it("selection - a drop not above τ selects only each metric's top set", () => {
    const r = selectChunkSets(input([0.3, 0.26, 0.22, 0.18]));
    expect(r.perMetric.every((v) => !v.dropExceedsTau && v.selected.length === 1)).toBe(true);
    expect(r.kept).toEqual([0]);
    const lowTau = selectChunkSets(input([0.3, 0.26, 0.22, 0.18]), { tau: 0.03 });
    // All drops equal 0.04: the first (highest) elbow wins, selecting only the top set.
    expect(lowTau.perMetric[0]!.dropAfter).toBe(1);
    expect(lowTau.kept).toEqual([0]);
  });

  it("selection - one set: it is kept as S*", () => {
    const r = selectChunkSets(input([0.4]));
    expect(r.kept).toEqual([0]);
    expect(r.decisions[0]!.reason).toBe("top-voted");
    expect(r.perMetric[0]!.largestDrop).toBe(0);
  });

  it("selection - all α equal: every set ties at argmax, the top re-ranked set wins and nothing else is kept", () => {
    const r = selectChunkSets(input([0.5, 0.5, 0.5, 0.5]));
    expect(r.decisions.every((d) => d.argmaxVotes.length === 6)).toBe(true);
    expect(r.topVoted).toBe(0);
    expect(r.kept).toEqual([0]);
    expect(r.contextIgnored).toBe(false);
  });

  it("selection - all α ≈ 0: the model ignored the context, keep the top re-ranked set and say so", () => {
    const r = selectChunkSets(input([0.001, 0.009, 0.0, 0.005]));
    expect(r.contextIgnored).toBe(true);
    expect(r.kept).toEqual([0]);
    expect(r.decisions[0]!.reason).toBe("fallback-top-reranked");
    expect(r.decisions.slice(1).every((d) => d.reason === "context-ignored" && !d.kept)).toBe(true);
    expect(r.decisions[0]!.explanation).toMatch(/ε = 0.01/);
  });

  it("selection - ties in votes go to higher mean α, then to re-rank order", () => {
    const m = ["a", "b"];
    const byMean = selectChunkSets(input([0, 0, 0], { a: [0.9, 0.2, 0.5], b: [0.3, 0.9, 0.5] }, m), { minVotes: 1 });
    expect(byMean.decisions[0]!.argmaxVotes).toEqual(["a"]);
    expect(byMean.decisions[1]!.argmaxVotes).toEqual(["b"]);
    expect(byMean.topVoted).toBe(0); // mean 0.6 vs 0.55
    const byRank = selectChunkSets(input([0, 0, 0], { a: [0.9, 0.2, 0.1], b: [0.2, 0.9, 0.1] }, m), { minVotes: 1 });
    expect(byRank.topVoted).toBe(0);
  });

  it("selection - maxSets and token budget cap the kept sets in priority order", () => {
    const data = input([0.9, 0.85, 0.8, 0.1]);
    expect(selectChunkSets(data).kept).toEqual([0, 1, 2]);
    const capped = selectChunkSets(data, { maxSets: 2 });
    expect(capped.kept).toEqual([0, 1]);
    expect(capped.decisions[2]!.reason).toBe("over-max-sets");
    const budget = selectChunkSets(data, { tokenBudget: 250 });
    expect(budget.kept).toEqual([0, 1]);
    expect(budget.decisions[2]!.reason).toBe("over-token-budget");
  });

  it("selection - rejects inconsistent input with messages that name the problem", () => {
    expect(() => selectChunkSets({ sets: [], metrics: SIX, alphas: {} })).toThrow(/no chunk sets/);
    expect(() => selectChunkSets(input([0.1, 0.2], { rouge1: [0.1] }))).toThrow(/"rouge1" has 1 α values for 2 sets/);
    expect(() => selectChunkSets(input([0.1, Number.NaN]))).toThrow(/must be finite/);
    expect(() => selectChunkSets(input([0.1]), { minVotes: 7 })).toThrow(/minVotes must be an integer in \[1, 6\]/);
    expect(() => selectChunkSets(input([0.1]), { tau: -1 })).toThrow(/tau/);
    expect(() => selectChunkSets({ ...input([0.1]), metrics: ["cosine", "cosine"] })).toThrow(/twice/);
  });
});
