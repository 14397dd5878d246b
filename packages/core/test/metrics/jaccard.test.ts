import { afterAll, describe, expect, it } from "vitest";
import { jaccardSimilarity } from "../../src/metrics/jaccard.js";
import { cases, expectClose, expected, reportMaxError } from "./fixtures.js";

describe("jaccardSimilarity", () => {
  afterAll(() => reportMaxError("jaccard"));

  it("jaccardSimilarity - golden: |A∩B| / |A∪B| over rouge-score token sets, with and without stemmer", () => {
    const inputs = new Map(cases.cases.map((c) => [c.id, c]));
    for (const golden of expected.cases) {
      const { reference, candidate } = inputs.get(golden.id)!;
      expectClose(jaccardSimilarity(reference, candidate), golden.jaccard.plain, `${golden.id} plain`);
      expectClose(jaccardSimilarity(reference, candidate, { stemmer: true }), golden.jaccard.stemmed, `${golden.id} stemmed`);
    }
  });

  it("jaccardSimilarity - hand-worked: sets ignore repeats and order", () => {
    // A = {the, cat, sat}, B = {the, cat, ran}: |A∩B| = 2, |A∪B| = 4 -> 0.5.
    expect(jaccardSimilarity("the cat sat the the", "ran cat the")).toBe(0.5);
  });

  it("jaccardSimilarity - both empty is 1, one empty is 0", () => {
    expect(jaccardSimilarity("", "...")).toBe(1);
    expect(jaccardSimilarity("", "word")).toBe(0);
    expect(jaccardSimilarity("word", "!!!")).toBe(0);
  });

  it("jaccardSimilarity - stemmer option conflates inflections", () => {
    expect(jaccardSimilarity("stirring heated", "stirred heating")).toBe(0);
    expect(jaccardSimilarity("stirring heated", "stirred heating", { stemmer: true })).toBe(1);
  });

  it("jaccardSimilarity - property: symmetric and in [0, 1]", () => {
    for (const c of cases.cases) {
      const ab = jaccardSimilarity(c.reference, c.candidate);
      expect(jaccardSimilarity(c.candidate, c.reference)).toBe(ab);
      expect(ab).toBeGreaterThanOrEqual(0);
      expect(ab).toBeLessThanOrEqual(1);
    }
  });

  it("jaccardSimilarity - rejects non-string input", () => {
    expect(() => jaccardSimilarity(["a"] as unknown as string, "a")).toThrow(/jaccardSimilarity\(a\) must be a string, got an array/);
  });
});
