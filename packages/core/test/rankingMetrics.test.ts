import { describe, expect, it } from "vitest";
import {
  meanReciprocalRank,
  ndcgAtK,
  precisionAtK,
  recallAtK,
  reciprocalRank,
} from "../src/retrieval/rankingMetrics.js";
import { reciprocalRankFusion } from "../src/retrieval/reciprocalRankFusion.js";

describe("ranking metrics", () => {
  const ranked = ["d3", "d1", "d7", "d1", "d2", "d9"];
  const relevant = new Set(["d1", "d2", "d5"]);

  it("ranking - precision@k and recall@k count a repeated id once (hand-worked)", () => {
    // Deduplicated ranking: d3 d1 d7 d2 d9.
    expect(precisionAtK(ranked, relevant, 2)).toBe(1 / 2);
    expect(precisionAtK(ranked, relevant, 4)).toBe(2 / 4);
    expect(precisionAtK(ranked, relevant, 10)).toBe(2 / 10);
    expect(recallAtK(ranked, relevant, 1)).toBe(0);
    expect(recallAtK(ranked, relevant, 2)).toBe(1 / 3);
    expect(recallAtK(ranked, relevant, 4)).toBe(2 / 3);
  });

  it("ranking - reciprocal rank and MRR (hand-worked)", () => {
    expect(reciprocalRank(ranked, relevant)).toBe(1 / 2);
    expect(reciprocalRank(ranked, relevant, 1)).toBe(0);
    expect(reciprocalRank(["x", "y"], relevant)).toBe(0);
    expect(
      meanReciprocalRank([
        { ranked, relevant },
        { ranked: ["d5"], relevant },
        { ranked: ["a", "b", "d2"], relevant },
      ]),
    ).toBeCloseTo((1 / 2 + 1 + 1 / 3) / 3, 15);
  });

  it("ranking - nDCG@k with graded relevance (hand-worked)", () => {
    const grades = new Map([
      ["a", 3],
      ["b", 2],
      ["c", 1],
    ]);
    // Ranking c, x, a: DCG = 1/log2(2) + 0 + 3/log2(4) = 1 + 1.5 = 2.5.
    // Ideal a, b, c: 3 + 2/log2(3) + 1/2.
    const ideal = 3 + 2 / Math.log2(3) + 0.5;
    expect(ndcgAtK(["c", "x", "a"], grades, 3)).toBeCloseTo(2.5 / ideal, 15);
    // Exponential gains: DCG = 1 + 7/2; ideal = 7 + 3/log2(3) + 1/2.
    expect(ndcgAtK(["c", "x", "a"], grades, 3, "exponential")).toBeCloseTo(4.5 / (7 + 3 / Math.log2(3) + 0.5), 15);
    expect(ndcgAtK(["a", "b", "c"], grades, 3)).toBe(1);
    // k cuts both the ranking and the ideal list.
    expect(ndcgAtK(["b", "a"], grades, 1)).toBeCloseTo(2 / 3, 15);
    // Binary relevance from a Set.
    expect(ndcgAtK(["x", "d1"], new Set(["d1"]), 10)).toBeCloseTo(1 / Math.log2(3), 15);
  });

  it("ranking - undefined cases are errors, not NaN", () => {
    expect(() => recallAtK(ranked, new Set(), 5)).toThrow(/without relevant ids/);
    expect(() => ndcgAtK(ranked, new Map([["a", 0]]), 5)).toThrow(/without relevant ids/);
    expect(() => precisionAtK(ranked, relevant, 0)).toThrow(/k must be an integer ≥ 1/);
    expect(() => meanReciprocalRank([])).toThrow(/no queries/);
  });
});

describe("reciprocalRankFusion", () => {
  it("rrf - sums 1/(k + rank) over rankings (hand-worked, k = 60)", () => {
    const fused = reciprocalRankFusion([
      ["a", "b", "c"],
      ["b", "c", "d"],
    ]);
    const score = Object.fromEntries(fused.map((h) => [h.id, h.score]));
    expect(score.a).toBeCloseTo(1 / 61, 15);
    expect(score.b).toBeCloseTo(1 / 62 + 1 / 61, 15);
    expect(score.c).toBeCloseTo(1 / 63 + 1 / 62, 15);
    expect(score.d).toBeCloseTo(1 / 63, 15);
    expect(fused.map((h) => h.id)).toEqual(["b", "c", "a", "d"]);
    expect(fused[0]!.ranks).toEqual([2, 1]);
    expect(fused[2]!.ranks).toEqual([1, undefined]);
  });

  it("rrf - weights scale each ranking's contribution (hand-worked)", () => {
    const fused = reciprocalRankFusion([["a", "b"], ["b", "a"]], 60, [2, 1]);
    expect(fused.map((h) => h.id)).toEqual(["a", "b"]);
    expect(fused[0]!.score).toBeCloseTo(2 / 61 + 1 / 62, 15);
    expect(fused[1]!.score).toBeCloseTo(2 / 62 + 1 / 61, 15);
    expect(() => reciprocalRankFusion([["a"]], 60, [1, 2])).toThrow(/1 weights? for|weights for 1 rankings/);
    expect(() => reciprocalRankFusion([["a"]], 60, [-1])).toThrow(/weights must be/);
  });

  it("rrf - ties are broken by best rank, then first appearance; repeats inside one ranking count once", () => {
    const fused = reciprocalRankFusion([["x", "y"], ["y", "x"], ["z", "z"]], 10);
    expect(fused.map((h) => h.id)).toEqual(["x", "y", "z"]);
    expect(fused[2]!.score).toBeCloseTo(1 / 11, 15);
    expect(() => reciprocalRankFusion([["a"]], -1)).toThrow(/k must be/);
    expect(reciprocalRankFusion([])).toEqual([]);
  });
});
