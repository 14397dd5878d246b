import { describe, expect, it } from "vitest";
import { convexScoreFusion } from "../src/retrieval/convexScoreFusion.js";
import { reciprocalRankFusion } from "../src/retrieval/reciprocalRankFusion.js";

const scored = (pairs: [string, number][]) => pairs.map(([id, score]) => ({ id, score }));

describe("convexScoreFusion", () => {
  it("convex - min-max normalises each list and mixes λ·bm25 + (1 − λ)·dense (hand-worked)", () => {
    // bm25 a 10, b 6, c 2 → 1, 0.5, 0; dense b 0.9, d 0.5, a 0.4 → 1, 0.2, 0.
    const bm25 = scored([["a", 10], ["b", 6], ["c", 2]]);
    const dense = scored([["b", 0.9], ["d", 0.5], ["a", 0.4]]);
    const fused = convexScoreFusion(bm25, dense, 0.6);
    const score = Object.fromEntries(fused.map((h) => [h.id, h.score]));
    expect(score.a).toBeCloseTo(0.6 * 1 + 0.4 * 0, 12);
    expect(score.b).toBeCloseTo(0.6 * 0.5 + 0.4 * 1, 12);
    expect(score.c).toBeCloseTo(0, 12);
    expect(score.d).toBeCloseTo(0.4 * 0.2, 12);
    expect(fused.map((h) => h.id)).toEqual(["b", "a", "d", "c"]);
    expect(fused[0]!.ranks).toEqual([2, 1]);
    expect(fused[2]!.ranks).toEqual([undefined, 2]);
  });

  it("convex - λ = 1 and λ = 0 reproduce the BM25 and the dense ranking", () => {
    const bm25 = scored([["a", 3], ["b", 2], ["c", 1]]);
    const dense = scored([["c", 0.8], ["b", 0.7], ["d", 0.1]]);
    expect(convexScoreFusion(bm25, dense, 1).slice(0, 3).map((h) => h.id)).toEqual(["a", "b", "c"]);
    // d (dense's last) and a (BM25's first) both get 0 at λ = 0; the tie goes to a's better best rank.
    expect(convexScoreFusion(bm25, dense, 0).map((h) => h.id)).toEqual(["c", "b", "a", "d"]);
  });

  it("convex - a one-hit or flat list gives every hit 1; a missing document gets 0 from that list", () => {
    const one = convexScoreFusion(scored([["a", -7.5]]), scored([["b", 0.3], ["a", 0.1]]), 0.5);
    // a: 0.5·1 + 0.5·0 = 0.5; b: 0 + 0.5·1 = 0.5 — tied, a's best rank (1 in bm25) equals b's (1 in dense), so by id.
    expect(one.map((h) => [h.id, h.score])).toEqual([
      ["a", 0.5],
      ["b", 0.5],
    ]);
    const flat = convexScoreFusion(scored([["x", 2], ["y", 2]]), [], 0.3);
    expect(flat.map((h) => h.score)).toEqual([0.3, 0.3]);
    expect(convexScoreFusion([], [], 0.5)).toEqual([]);
  });

  it("convex - ties go to the better best rank, then the smaller id; repeats in a list count once", () => {
    // c and a both score 0.5 (a: bm25 top; c: dense top) — equal best rank 1, so id order; z is rank 2 in both.
    const fused = convexScoreFusion(scored([["c", 1], ["z", 0], ["z", 5]]), scored([["a", 1], ["z", 0]]), 0.5);
    expect(fused.map((h) => h.id)).toEqual(["a", "c", "z"]);
    expect(fused[2]!.ranks).toEqual([2, 2]);
  });

  it("convex - keeps a hit that one list puts far ahead, where RRF sees only ranks", () => {
    // BM25 puts a far ahead (20 vs 5); dense ranks b first but a close third. Normalised: bm25 a 1, b 0.25,
    // c 0.2, d 0; dense b 1, c 0.9375, a 0.75, d 0. λ = 0.5: a 0.875, b 0.625. RRF: b (2nd + 1st) beats a (1st + 3rd).
    const bm25 = scored([["a", 20], ["b", 5], ["c", 4], ["d", 0]]);
    const dense = scored([["b", 0.9], ["c", 0.85], ["a", 0.7], ["d", 0.1]]);
    expect(reciprocalRankFusion([bm25.map((h) => h.id), dense.map((h) => h.id)], 60)[0]!.id).toBe("b");
    const fused = convexScoreFusion(bm25, dense, 0.5);
    expect(fused[0]!.id).toBe("a");
    expect(fused[0]!.score).toBeCloseTo(0.875, 12);
    expect(fused[1]!.score).toBeCloseTo(0.625, 12);
  });

  it("convex - rejects λ outside [0, 1] and non-finite scores, naming the problem", () => {
    expect(() => convexScoreFusion([], [], 1.5)).toThrow(/bm25Weight \(λ\) must be a number from 0 to 1, got 1.5/);
    expect(() => convexScoreFusion([], [], Number.NaN)).toThrow(/from 0 to 1/);
    expect(() => convexScoreFusion(scored([["a", Number.POSITIVE_INFINITY]]), [], 0.5)).toThrow(/bm25 score of "a" is Infinity/);
  });
});
