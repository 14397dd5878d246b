import { afterAll, describe, expect, it } from "vitest";
import { rouge1, rouge2, rougeL, rougeLsum, rougeN, rougeScores, type RougeScore } from "../../src/metrics/rouge.js";
import { cases, expectClose, expected, reportMaxError } from "./fixtures.js";

const VARIANTS = ["rouge1", "rouge2", "rougeL", "rougeLsum"] as const;

function flatten(scores: Record<(typeof VARIANTS)[number], RougeScore>): number[] {
  return VARIANTS.flatMap((v) => [scores[v].precision, scores[v].recall, scores[v].fmeasure]);
}

function expectScore(actual: RougeScore, p: number, r: number, f: number): void {
  expect(actual.precision).toBeCloseTo(p, 12);
  expect(actual.recall).toBeCloseTo(r, 12);
  expect(actual.fmeasure).toBeCloseTo(f, 12);
}

describe("rouge", () => {
  afterAll(() => reportMaxError("rouge"));
  const inputs = new Map(cases.cases.map((c) => [c.id, c]));

  it("rouge - golden: rougeScores equals rouge-score on every case, without and with stemmer", () => {
    expect(expected.cases.length).toBe(cases.cases.length);
    for (const golden of expected.cases) {
      const input = inputs.get(golden.id)!;
      for (const mode of ["plain", "stemmed"] as const) {
        const ours = flatten(rougeScores(input.reference, input.candidate, { stemmer: mode === "stemmed" }));
        ours.forEach((value, k) => expectClose(value, golden.rouge[mode][k]!, `${golden.id} ${mode} #${k}`));
      }
    }
  });

  it("rouge - golden: single-metric functions equal rougeScores", () => {
    for (const golden of expected.cases) {
      if (golden.id.startsWith("long-")) continue; // covered above; keeps the suite fast
      const { reference, candidate } = inputs.get(golden.id)!;
      const singles = {
        rouge1: rouge1(reference, candidate, { stemmer: true }),
        rouge2: rougeN(reference, candidate, 2, { stemmer: true }),
        rougeL: rougeL(reference, candidate, { stemmer: true }),
        rougeLsum: rougeLsum(reference, candidate, { stemmer: true }),
      };
      flatten(singles).forEach((value, k) => expectClose(value, golden.rouge.stemmed[k]!, `${golden.id} single #${k}`));
      expect(rouge2(reference, candidate)).toEqual(rougeScores(reference, candidate).rouge2);
    }
  });

  it("rouge - hand-worked: one substituted word in three", () => {
    // ref "the cat sat", cand "the cat ran".
    // rouge1: overlap {the, cat} = 2 of 3 on each side -> P = R = F = 2/3.
    // rouge2: ref {the cat, cat sat}, cand {the cat, cat ran}: overlap 1 of 2 -> 1/2.
    // rougeL: LCS "the cat" = 2 -> 2/3.
    const s = rougeScores("the cat sat", "the cat ran");
    expectScore(s.rouge1, 2 / 3, 2 / 3, 2 / 3);
    expectScore(s.rouge2, 1 / 2, 1 / 2, 1 / 2);
    expectScore(s.rougeL, 2 / 3, 2 / 3, 2 / 3);
  });

  it("rouge - hand-worked: repeated tokens are clipped", () => {
    // ref "the the the the" (4 x the), cand "the cat the" (2 x the): overlap min(4, 2) = 2.
    // P = 2/3, R = 2/4, F = 2 * (2/3) * (1/2) / (2/3 + 1/2) = (2/3) / (7/6) = 4/7.
    expectScore(rouge1("the the the the", "the cat the"), 2 / 3, 1 / 2, 4 / 7);
  });

  it("rouge - hand-worked: rougeLsum credits sentence reordering that rougeL does not", () => {
    // ref lines [a b], [c d]; cand lines [a c], [b d].
    // rougeL on the flat sequences a b c d vs a c b d: LCS 3 -> 3/4.
    // rougeLsum: union LCS of [a b] with ([a c], [b d]) = {a, b}; of [c d] = {c, d} -> 4 hits of 4.
    expectScore(rougeL("a b\nc d", "a c\nb d"), 3 / 4, 3 / 4, 3 / 4);
    expectScore(rougeLsum("a b\nc d", "a c\nb d"), 1, 1, 1);
  });

  it("rouge - hand-worked: rougeLsum union LCS counts a reference position once", () => {
    // ref one line [a a]; cand lines [a], [a]. Each candidate line's LCS ends on the same
    // reference position (index 1, the backtrack starts at the end), so the union is {1}: 1 hit.
    // P = 1/2, R = 1/2 (rouge-score gives the same).
    expectScore(rougeLsum("a a", "a\na"), 1 / 2, 1 / 2, 1 / 2);
    expectScore(rougeLsum("a\na", "a a"), 1, 1, 1);
  });

  it("rouge - empty sides give zeros, never NaN", () => {
    for (const [a, b] of [["", ""], ["", "x"], ["x", ""], ["...", "x"]] as const) {
      const s = rougeScores(a, b);
      for (const v of VARIANTS) expect(s[v]).toEqual({ precision: 0, recall: 0, fmeasure: 0 });
    }
  });

  it("rouge - property: identical non-empty texts score 1 and every F is in [0, 1]", () => {
    for (const c of cases.cases) {
      const self = rougeScores(c.reference, c.reference);
      const tokens = c.reference.toLowerCase().match(/[a-z0-9]+/g) ?? [];
      if (tokens.length >= 2) for (const v of VARIANTS) expect(self[v].fmeasure, `${c.id} ${v}`).toBeCloseTo(1, 12);
      const s = rougeScores(c.reference, c.candidate);
      for (const v of VARIANTS) {
        expect(s[v].fmeasure).toBeGreaterThanOrEqual(0);
        expect(s[v].fmeasure).toBeLessThanOrEqual(1);
      }
    }
  });

  it("rouge - property: swapping reference and candidate swaps P and R for rouge1, rouge2, rougeL", () => {
    for (const c of cases.cases.slice(0, 120)) {
      const ab = rougeScores(c.reference, c.candidate);
      const ba = rougeScores(c.candidate, c.reference);
      for (const v of ["rouge1", "rouge2", "rougeL"] as const) {
        expect(ba[v].precision).toBe(ab[v].recall);
        expect(ba[v].recall).toBe(ab[v].precision);
        expect(ba[v].fmeasure).toBeCloseTo(ab[v].fmeasure, 14);
      }
    }
  });

  it("rouge - 20k-token texts: rougeL and a single 20k-token rougeLsum sentence finish with known values", () => {
    // Candidate = reference minus every 10th word, so the LCS is the whole candidate:
    // P = 1, R = 18000 / 20000 = 0.9. rougeLsum sees one line each (one huge "sentence").
    const words = Array.from({ length: 20_000 }, (_, i) => `w${(i * 7919) % 1009}`);
    const reference = words.join(" ");
    const candidate = words.filter((_, i) => i % 10 !== 0).join(" ");
    expectScore(rougeL(reference, candidate), 1, 0.9, (2 * 0.9) / 1.9);
    expectScore(rougeLsum(reference, candidate), 1, 0.9, (2 * 0.9) / 1.9);
  }, 120_000);

  it("rouge - rejects bad arguments with helpful errors", () => {
    expect(() => rougeScores(null as unknown as string, "x")).toThrow(/rougeScores\(reference\) must be a string, got null/);
    expect(() => rouge1("x", 3 as unknown as string)).toThrow(TypeError);
    expect(() => rougeN("x", "y", 0)).toThrow(RangeError);
    expect(() => rougeN("x", "y", 1.5)).toThrow(/integer >= 1/);
  });
});
