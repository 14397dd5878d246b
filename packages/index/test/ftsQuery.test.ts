import { describe, expect, it } from "vitest";
import { toFtsMatch } from "../src/index.js";

describe("ftsQuery", () => {
  it("ftsQuery - word runs become quoted terms joined by OR, lower-cased and de-duplicated", () => {
    expect(toFtsMatch("Explain the Acetaminophen synthesis, the steps")).toBe('"explain" OR "the" OR "acetaminophen" OR "synthesis" OR "steps"');
  });

  it("ftsQuery - operators and punctuation cannot reach FTS5 as syntax", () => {
    expect(toFtsMatch('acid AND (base* OR "x") NOT -y NEAR/2 col:z ^w')).toBe(
      '"acid" OR "and" OR "base" OR "or" OR "x" OR "not" OR "y" OR "near" OR "2" OR "col" OR "z" OR "w"',
    );
    const match = toFtsMatch('he said "yes"')!;
    expect(match.match(/"/g)!.length % 2).toBe(0);
  });

  it("ftsQuery - letters and digits of any script count; text without any gives undefined", () => {
    expect(toFtsMatch("Säure 4-aminophenol 酸")).toBe('"säure" OR "4" OR "aminophenol" OR "酸"');
    expect(toFtsMatch("?! -- () **")).toBeUndefined();
  });
});
