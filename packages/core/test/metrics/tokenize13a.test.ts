import { describe, expect, it } from "vitest";
import { tokenize13a } from "../../src/metrics/tokenize13a.js";
import { cases, expected } from "./fixtures.js";

describe("tokenize13a", () => {
  it("tokenize13a - golden: equals sacrebleu Tokenizer13a on case texts and edge strings", () => {
    const inputs = new Map(cases.cases.map((c) => [c.id, c]));
    let checked = 0;
    for (const golden of expected.cases) {
      if (!golden.tokenize13a) continue;
      const input = inputs.get(golden.id)!;
      expect(tokenize13a(input.reference), golden.id).toBe(golden.tokenize13a.reference);
      expect(tokenize13a(input.candidate), golden.id).toBe(golden.tokenize13a.candidate);
      checked++;
    }
    expect(checked).toBeGreaterThan(30);
    cases.tokenize13a.forEach((line, i) => expect(tokenize13a(line), JSON.stringify(line)).toBe(expected.tokenize13a[i]));
  });

  it("tokenize13a - keeps decimals and thousands together, splits sentence punctuation", () => {
    expect(tokenize13a("Add 3.5 mL of 1,000 g.")).toBe("Add 3.5 mL of 1,000 g .");
    expect(tokenize13a("pages 10-20, well-known")).toBe("pages 10 - 20 , well-known");
  });

  it("tokenize13a - unescapes entities once, in sacrebleu's order", () => {
    // &quot; is replaced before &amp;, &lt; after it (values checked with sacrebleu 2.6.0).
    expect(tokenize13a("a &amp;quot; b")).toBe("a & quot ; b");
    expect(tokenize13a("a &amp;lt; b")).toBe("a < b");
    expect(tokenize13a("&quot;x&quot;")).toBe('" x "');
  });

  it("tokenize13a - drops <skipped> and joins hyphenated line breaks", () => {
    expect(tokenize13a("build-\nup <skipped>now")).toBe("buildup now");
  });
});
