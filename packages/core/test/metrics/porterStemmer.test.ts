import { describe, expect, it } from "vitest";
import { porterStem } from "../../src/metrics/porterStemmer.js";
import { cases, expected } from "./fixtures.js";

describe("porterStem", () => {
  it("porterStem - golden: equals NLTK PorterStemmer() (NLTK_EXTENSIONS) on the whole word list", () => {
    expect(cases.stemWords.length).toBeGreaterThanOrEqual(2000);
    expect(expected.stems.length).toBe(cases.stemWords.length);
    const mismatches = cases.stemWords
      .map((word, i) => ({ word, ours: porterStem(word), nltk: expected.stems[i] }))
      .filter((r) => r.ours !== r.nltk);
    expect(mismatches).toEqual([]);
  });

  it("porterStem - NLTK extensions: irregular forms and 4-letter ies/ied", () => {
    expect(["sky", "skies", "dying", "news", "innings"].map(porterStem)).toEqual(["sky", "sky", "die", "news", "inning"]);
    expect(["dies", "flies", "died", "spied"].map(porterStem)).toEqual(["die", "fli", "die", "spi"]);
  });

  it("porterStem - step 1c turns y into i only after a consonant", () => {
    expect(porterStem("happy")).toBe("happi");
    expect(porterStem("enjoy")).toBe("enjoy");
  });

  it("porterStem - step 2 NLTK rules alli, fulli, logi", () => {
    expect(porterStem("radicalli")).toBe("radic");
    expect(porterStem("hopefulli")).toBe("hope");
    expect(porterStem("geologi")).toBe("geolog");
  });

  it("porterStem - short words are only lower-cased", () => {
    expect(porterStem("Is")).toBe("is");
    expect(porterStem("as")).toBe("as");
  });

  it("porterStem - astral characters count as one letter, as in Python", () => {
    // "a😀😀ing": -ing removed, then the double "😀😀" is undoubled like "hopp" -> "hop".
    expect(porterStem("a😀😀ing")).toBe("a😀");
  });

  it("porterStem - rejects non-string input with a TypeError", () => {
    expect(() => porterStem(null as unknown as string)).toThrow(TypeError);
  });
});
