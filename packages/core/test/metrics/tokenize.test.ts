import { afterAll, describe, expect, it } from "vitest";
import { rougeTokenize } from "../../src/metrics/tokenize.js";
import { cases, expected, reportMaxError } from "./fixtures.js";

describe("rougeTokenize", () => {
  afterAll(() => reportMaxError("tokenize"));

  it("rougeTokenize - golden: equals rouge-score's tokenizer with and without stemmer", () => {
    const inputs = new Map(cases.cases.map((c) => [c.id, c]));
    let checked = 0;
    for (const golden of expected.cases) {
      if (!golden.tokens) continue;
      const input = inputs.get(golden.id)!;
      expect(rougeTokenize(input.reference), golden.id).toEqual(golden.tokens.reference);
      expect(rougeTokenize(input.candidate), golden.id).toEqual(golden.tokens.candidate);
      expect(rougeTokenize(input.reference, { stemmer: true }), golden.id).toEqual(golden.tokens.referenceStemmed);
      expect(rougeTokenize(input.candidate, { stemmer: true }), golden.id).toEqual(golden.tokens.candidateStemmed);
      checked++;
    }
    expect(checked).toBeGreaterThan(30);
  });

  it("rougeTokenize - lower-casing maps to ASCII for exactly the code points Python's does", () => {
    // Only A-Z, U+0130 (İ -> i + combining dot) and U+212A (Kelvin sign -> k) lower-case into [a-z0-9].
    const ours: [number, string][] = [];
    for (let cp = 0x80; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const lowered = String.fromCodePoint(cp).toLowerCase().replace(/[^a-z0-9]+/g, " ");
      if (lowered.trim() !== "") ours.push([cp, lowered]);
    }
    expect(ours).toEqual(expected.lowercaseToAscii);
  });

  it("rougeTokenize - non-[a-z0-9] characters split words", () => {
    expect(rougeTokenize("The café's 3.5 mL")).toEqual(["the", "caf", "s", "3", "5", "ml"]);
    expect(rougeTokenize("İstanbul")).toEqual(["i", "stanbul"]);
    expect(rougeTokenize("東京 🍕 ß")).toEqual([]);
    expect(rougeTokenize("")).toEqual([]);
    expect(rougeTokenize("line one\nline\ttwo")).toEqual(["line", "one", "line", "two"]);
  });

  it("rougeTokenize - stemmer only touches tokens longer than 3 characters", () => {
    // "dogs" (4) -> "dog"; "ties" (4) -> "tie"; "are"/"was" (3) are left alone (Porter would make "wa").
    expect(rougeTokenize("Running dogs are ties was", { stemmer: true })).toEqual(["run", "dog", "are", "tie", "was"]);
  });

  it("rougeTokenize - rejects non-string input with a TypeError", () => {
    expect(() => rougeTokenize(undefined as unknown as string)).toThrow(TypeError);
    expect(() => rougeTokenize(42 as unknown as string)).toThrow(/must be a string, got a number/);
  });
});
