import { afterAll, describe, expect, it } from "vitest";
import { corpusBleu, sentenceBleu, type BleuOptions, type BleuResult } from "../../src/metrics/bleu.js";
import { cases, expectClose, expected, reportMaxError, type ExpectedBleu } from "./fixtures.js";

function expectBleu(actual: BleuResult, want: ExpectedBleu, label: string): void {
  expectClose(actual.score, want.score, `${label} score`);
  expectClose(actual.bp, want.bp, `${label} bp`);
  expect(actual.counts, `${label} counts`).toEqual(want.counts);
  expect(actual.totals, `${label} totals`).toEqual(want.totals);
  expect(actual.sysLen, `${label} sysLen`).toBe(want.sysLen);
  expect(actual.refLen, `${label} refLen`).toBe(want.refLen);
  if (want.precisions) {
    expect(actual.precisions.length).toBe(want.precisions.length);
    actual.precisions.forEach((p, i) => expectClose(p, want.precisions![i]!, `${label} precision ${i + 1}`));
  }
}

describe("bleu", () => {
  afterAll(() => reportMaxError("bleu"));
  const inputs = new Map(cases.cases.map((c) => [c.id, c]));

  it("bleu - golden: sentenceBleu equals sacrebleu.sentence_bleu(candidate, [reference]) on every case", () => {
    for (const golden of expected.cases) {
      const { reference, candidate } = inputs.get(golden.id)!;
      expectBleu(sentenceBleu(candidate, reference), golden.sentenceBleu, golden.id);
    }
  });

  it("bleu - golden: corpusBleu equals sacrebleu.corpus_bleu (README example, variable refs, all cases)", () => {
    for (const corpus of cases.corpora) {
      const want = expected.corpora.find((c) => c.id === corpus.id)!;
      expectBleu(corpusBleu(corpus.hypotheses, corpus.references), want.bleu, corpus.id);
    }
    const all = expected.corpora.find((c) => c.id === "all-cases")!;
    const hypotheses = cases.cases.map((c) => c.candidate);
    expectBleu(corpusBleu(hypotheses, [cases.cases.map((c) => c.reference)]), all.bleu, "all-cases");
  });

  it("bleu - golden: multiple references per sentence (closest length, max clipping)", () => {
    cases.sentenceMultiRef.forEach((m, i) => expectBleu(sentenceBleu(m.hypothesis, m.references), expected.sentenceMultiRef[i]!.bleu, m.id));
  });

  it("bleu - golden: smoothing, effective order, lowercase, tokenize and order options", () => {
    expect(expected.bleuOptionCases.length).toBe(cases.bleuOptionCases.length);
    cases.bleuOptionCases.forEach((oc, i) => {
      const { reference, candidate } = inputs.get(oc.caseId)!;
      const label = `${oc.caseId} ${JSON.stringify(oc.options)}`;
      expectBleu(sentenceBleu(candidate, [reference], oc.options as BleuOptions), expected.bleuOptionCases[i]!, label);
    });
  });

  it("bleu - sacrebleu README: 48.53 with both reference streams, 45.07 with the first alone", () => {
    const sys = ["The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."];
    const refs1 = ["The dog bit the man.", "It was not unexpected.", "The man bit him first."];
    const refs2 = ["The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."];
    expect(corpusBleu(sys, [refs1, refs2]).score.toFixed(2)).toBe("48.53");
    expect(corpusBleu(sys, [refs1]).score.toFixed(2)).toBe("45.07");
  });

  it("bleu - hand-worked: exp smoothing and effective order on a 3-token sentence", () => {
    // hyp "a b c" vs ref "a b d": 13a keeps the tokens; totals 3/2/1/0, matches 2/1/0/0.
    // p1 = 200/3, p2 = 100/2 = 50, p3: no match -> exp smoothing 100 / (2 * 1) = 50,
    // order 4 has no hypothesis n-grams -> effective order 3. bp = 1 (equal lengths).
    // score = exp((ln(200/3) + ln 50 + ln 50) / 3) = (200/3 * 50 * 50)^(1/3) = 166666.67^(1/3) ≈ 55.032.
    const r = sentenceBleu("a b c", "a b d");
    expect(r.counts).toEqual([2, 1, 0, 0]);
    expect(r.totals).toEqual([3, 2, 1, 0]);
    expect(r.precisions[0]).toBeCloseTo(200 / 3, 12);
    expect(r.precisions[2]).toBeCloseTo(50, 12);
    expect(r.score).toBeCloseTo(Math.cbrt((200 / 3) * 50 * 50), 10);
  });

  it("bleu - empty hypothesis or reference gives 0, never NaN", () => {
    expect(sentenceBleu("", "")).toMatchObject({ score: 0, bp: 1, sysLen: 0, refLen: 0 });
    expect(sentenceBleu("", "some words")).toMatchObject({ score: 0, bp: 0, sysLen: 0, refLen: 2 });
    expect(sentenceBleu("some words", "")).toMatchObject({ score: 0, bp: 1 });
    expect(corpusBleu([""], [[""]]).score).toBe(0);
  });

  it("bleu - score is on the 0-100 scale", () => {
    expect(sentenceBleu("the cat sat on the mat", "the cat sat on the mat").score).toBeCloseTo(100, 10);
  });

  it("bleu - rejects bad arguments with helpful errors", () => {
    expect(() => sentenceBleu(1 as unknown as string, "x")).toThrow(/sentenceBleu\(hypothesis\) must be a string/);
    expect(() => sentenceBleu("x", [])).toThrow(RangeError);
    expect(() => corpusBleu([], [[]])).toThrow(/at least one segment/);
    expect(() => corpusBleu(["a", "b"], [["a"]])).toThrow(/reference stream 0 has 1 entries but there are 2 hypotheses/);
    expect(() => corpusBleu(["a"], ["a"] as unknown as string[][])).toThrow(TypeError);
    expect(() => corpusBleu(["a"], [[null]])).toThrow(/segment 0 has no reference/);
    expect(() => sentenceBleu("a", "a", { smoothMethod: "bogus" as "exp" })).toThrow(/unknown smoothMethod/);
    expect(() => sentenceBleu("a", "a", { maxNgramOrder: 0 })).toThrow(RangeError);
  });
});
