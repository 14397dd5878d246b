import { describe, expect, it } from "vitest";
import type { FusionSettings, SearchHit } from "@attr-rag/index";
import { compareFusionScores, fusionGrid, scoreFusion, tuneFusion, type FusionScore, type TuneItem } from "../src/tuneFusion.js";

const hit = (docId: string, score: number): SearchHit => ({ chunkId: `${docId}#0`, docId, ordinal: 0, start: 0, end: 1, text: docId, score });
const DEPTH = { fetch: 90, depth: 30 };

// BM25 is sure of the wrong document (x 10 vs g 1), dense a little less sure of the right one (g 0.9 vs x 0.1).
// Normalised: x = λ, g = 1 − λ, so convex puts g first for λ < 0.5 and, tied at 0.5 with both at best rank 1,
// by chunk id ("g#0" < "x#0"). RRF: weight 1 ties and keeps x (first seen); a heavier BM25 keeps x first.
const ITEMS: TuneItem[] = [{ bm25: [hit("x", 10), hit("g", 1)], dense: [hit("g", 0.9), hit("x", 0.1)], gold: ["g"] }];

describe("fusion tuning", () => {
  it("tune - the grid is RRF weights 1..32 × k 10, 30, 60 and convex λ 0, 0.05, ..., 1 (exact decimals)", () => {
    const grid = fusionGrid();
    expect(grid).toHaveLength(18 + 21);
    expect(grid.filter((f) => f.method === "rrf")).toContainEqual({ method: "rrf", rrfK: 30, bm25Weight: 32 });
    const lambdas = grid.flatMap((f) => (f.method === "convex" ? [f.bm25Weight] : []));
    expect(lambdas.slice(0, 3)).toEqual([0, 0.05, 0.1]);
    expect(lambdas).toContain(0.35);
    expect(lambdas.at(-1)).toBe(1);
  });

  it("tune - scores a fusion by doc-level nDCG@10 and R@30 (hand-worked)", () => {
    const right = scoreFusion(ITEMS, { method: "convex", bm25Weight: 0.25 }, DEPTH);
    expect(right.ndcg10).toBeCloseTo(1, 12);
    const wrong = scoreFusion(ITEMS, { method: "convex", bm25Weight: 0.75 }, DEPTH);
    expect(wrong.ndcg10).toBeCloseTo(1 / Math.log2(3), 12);
    expect(wrong.recall30).toBe(1);
    // Cut to one document, the gold one at rank 2 is lost.
    expect(scoreFusion(ITEMS, { method: "convex", bm25Weight: 0.75 }, { fetch: 1, depth: 1 }).recall30).toBe(0);
    expect(() => scoreFusion([{ ...ITEMS[0]!, gold: [] }], { method: "convex", bm25Weight: 0.5 }, DEPTH)).toThrow(/gold/);
  });

  it("tune - picks the best nDCG@10; among equals the simplest (λ 0.5 here); reports the fusion it replaces", () => {
    const before: FusionSettings = { method: "rrf", rrfK: 60, bm25Weight: 4 };
    const result = tuneFusion(ITEMS, fusionGrid(), before, DEPTH);
    expect(result.chosen.fusion).toEqual({ method: "convex", bm25Weight: 0.5 });
    expect(result.chosen.ndcg10).toBeCloseTo(1, 12);
    expect(result.before.fusion).toEqual(before);
    expect(result.before.ndcg10).toBeCloseTo(1 / Math.log2(3), 12);
    expect(result.ranked).toHaveLength(39);
    for (let i = 1; i < result.ranked.length; i++) expect(compareFusionScores(result.ranked[i - 1]!, result.ranked[i]!)).toBeLessThanOrEqual(0);
    // Every λ ≤ 0.5 scores 1; RRF never puts g first.
    const perfect = result.ranked.filter((s) => s.ndcg10 > 0.999).map((s) => s.fusion);
    expect(perfect.every((f) => f.method === "convex" && f.bm25Weight <= 0.5)).toBe(true);
    expect(perfect).toHaveLength(11);
  });

  it("tune - ties: higher R@30 first, then fewer parameters, then weights nearer equal and k nearer 60", () => {
    const s = (fusion: FusionSettings, ndcg10: number, recall30: number): FusionScore => ({ fusion, ndcg10, recall30 });
    const order = (xs: FusionScore[]) => [...xs].sort(compareFusionScores).map((x) => x.fusion);
    const rrf = (rrfK: number, bm25Weight: number): FusionSettings => ({ method: "rrf", rrfK, bm25Weight });
    const convex = (bm25Weight: number): FusionSettings => ({ method: "convex", bm25Weight });
    expect(order([s(convex(0.5), 0.8, 0.9), s(rrf(60, 1), 0.8, 0.95), s(convex(0.9), 0.81, 0.5)])).toEqual([convex(0.9), rrf(60, 1), convex(0.5)]);
    expect(order([s(rrf(60, 4), 0.8, 1), s(rrf(10, 1), 0.8, 1), s(rrf(60, 1), 0.8, 1), s(convex(0.9), 0.8, 1), s(convex(0.6), 0.8, 1)])).toEqual([
      convex(0.6),
      convex(0.9),
      rrf(60, 1),
      rrf(10, 1),
      rrf(60, 4),
    ]);
    // Differences of rounding only are ties.
    expect(order([s(convex(0.9), 0.8, 1), s(convex(0.5), 0.8 + 1e-13, 1)])).toEqual([convex(0.5), convex(0.9)]);
  });
});
