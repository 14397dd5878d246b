import { describe, expect, it } from "vitest";
import { attributionScores } from "../src/attribution/attributionScores.js";
import { rougeScores } from "../src/metrics/rouge.js";
import { selectChunkSets } from "../src/selection/selectChunkSets.js";

describe("attributionScores", () => {
  const full = "Add 10 mL of water.\nStir for five minutes.";

  it("attribution - α = 1 − sim: unchanged answer → 0, disjoint or empty answer → 1 on every text metric", () => {
    const table = attributionScores({
      full,
      occluded: [full, "Nothing here matches", ""],
      metrics: ["jaccard", "rouge1", "rouge2", "rougeL", "rougeLsum"],
    });
    expect(table.metrics).toEqual(["jaccard", "rouge1", "rouge2", "rougeL", "rougeLsum"]);
    for (const m of table.metrics) expect(table.alphas[m]).toEqual([0, 1, 1]);
  });

  it("attribution - partial change (hand-worked): ROUGE-1 and Jaccard on a one-word substitution", () => {
    // full tokens: add 10 ml of water stir for five minutes (9, all distinct)
    // occluded:    add 10 ml of ethanol stir for five minutes → 8 shared of 9 each side
    const t = attributionScores({ full, occluded: ["Add 10 mL of ethanol.\nStir for five minutes."], metrics: ["rouge1", "jaccard"] });
    expect(t.alphas.rouge1![0]).toBeCloseTo(1 - 8 / 9, 15);
    expect(t.alphas.jaccard![0]).toBeCloseTo(1 - 8 / 10, 15);
  });

  it("attribution - A_full is the reference: α uses rouge-score's F1 with A_full as target", () => {
    const occluded = "Stir for five minutes.";
    const t = attributionScores({ full, occluded: [occluded], metrics: ["rougeLsum"] });
    expect(t.alphas.rougeLsum![0]).toBe(1 - rougeScores(full, occluded).rougeLsum.fmeasure);
  });

  it("attribution - cosine uses the embeddings; all six metrics by default, in the paper's order", () => {
    const t = attributionScores({
      full,
      occluded: [full, "other"],
      embeddings: { full: [1, 0, 0], occluded: [[2, 0, 0], [0, 1, 0]] },
    });
    expect(t.metrics).toEqual(["cosine", "jaccard", "rouge1", "rouge2", "rougeL", "rougeLsum"]);
    expect(t.alphas.cosine![0]).toBeCloseTo(0, 15);
    expect(t.alphas.cosine![1]).toBeCloseTo(1, 15);
  });

  it("attribution - the table feeds selection: the set whose removal changes the answer is S*", () => {
    const occluded = [full, "Heat the ethanol to reflux.", "Add 10 mL of water.\nStir for five minutes!"];
    const t = attributionScores({ full, occluded, embeddings: { full: [1, 0], occluded: [[1, 0], [0, 1], [1, 0.01]] } });
    const selection = selectChunkSets({ sets: occluded.map((_, i) => ({ id: `S${i + 1}` })), metrics: t.metrics, alphas: t.alphas });
    expect(selection.topVoted).toBe(1);
    expect(selection.kept).toEqual([1]);
  });

  it("attribution - clear errors: unknown metric, cosine without embeddings, mismatched embedding count", () => {
    expect(() => attributionScores({ full, occluded: ["x"], metrics: ["bleu" as never] })).toThrow(/unknown metric "bleu"/);
    expect(() => attributionScores({ full, occluded: ["x"] })).toThrow(/cosine metric needs embeddings/);
    expect(() =>
      attributionScores({ full, occluded: ["x", "y"], embeddings: { full: [1], occluded: [[1]] } }),
    ).toThrow(/1 occluded embeddings for 2 occluded answers/);
    expect(() => attributionScores({ full, occluded: ["x"], metrics: [] })).toThrow(/at least one metric/);
  });
});
