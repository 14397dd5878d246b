import { describe, expect, it } from "vitest";
import { attributeSentences, tokenSentences } from "../src/index.js";

describe("sentence-level attribution", () => {
  // "Mix 2.5 g salt. Heat it!\nDone" as tokens: "Mix", " 2", ".5", " g", " salt", ".", " Heat", " it", "!", "\n", "Done"
  const text = "Mix 2.5 g salt. Heat it!\nDone";
  const pieces = ["Mix", " 2", ".5", " g", " salt", ".", " Heat", " it", "!", "\n", "Done"];
  const offsets = pieces.map((_, i) => pieces.slice(0, i).join("").length);

  it("tokens go to the sentence of their first non-space character; whitespace-only tokens to none", () => {
    expect(tokenSentences(text, offsets, [{ start: 0, end: 15 }, { start: 16, end: 24 }, { start: 25, end: 29 }])).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 1, -1, 2]);
  });

  it("a token with no text of its own goes with the next token; tokens past the text (a cut stop string) with none", () => {
    // Token 1 holds the first bytes of "é" (shown with token 2); token 4 lies past the cut text.
    expect(tokenSentences("A é. B", [0, 1, 1, 4, 6], [{ start: 0, end: 4 }, { start: 5, end: 6 }])).toEqual([0, 0, 0, 1, -1]);
  });

  it("drops are sums over each sentence's tokens; a set supports a sentence above the threshold", () => {
    const full = [-1, -1, -1, -1, -1, -1, -2, -2, -2, -0.5, -3];
    const noContext = full.map((x) => x - 1);
    // Set 0 shaped sentence 0 (each of its 6 tokens 0.5 nats likelier with it); set 1 shaped sentence 1 a little; set 2 nothing.
    const without0 = full.map((x, i) => (i < 6 ? x - 0.5 : x));
    const without1 = full.map((x, i) => (i >= 6 && i < 9 ? x - 0.2 : x));
    const without2 = [...full];
    const out = attributeSentences(text, { tokenOffsets: offsets, full, noContext, withoutSet: [without0, without1, without2] }, 0.5);
    expect(out.map((s) => s.text)).toEqual(["Mix 2.5 g salt.", "Heat it!", "Done"]);
    expect(out.map((s) => s.tokens)).toEqual([6, 3, 1]);
    expect(out[0]!.logProbFull).toBeCloseTo(-6, 12);
    expect(out[0]!.logProbNoContext).toBeCloseTo(-12, 12);
    expect(out[0]!.drops.map((d) => +d.toFixed(9))).toEqual([3, 0, 0]);
    expect(out[1]!.drops.map((d) => +d.toFixed(9))).toEqual([0, 0.6, 0]);
    expect(out.map((s) => s.topSets)).toEqual([[0], [1], []]);
    expect(out.map((s) => s.supported)).toEqual([true, true, false]);
    // A higher threshold leaves sentence 1 unsupported.
    expect(attributeSentences(text, { tokenOffsets: offsets, full, noContext, withoutSet: [without0, without1, without2] }, 1)[1]!.supported).toBe(false);
  });

  it("top sets are the largest drops first, at most three; mismatched lengths and bad thresholds are refused", () => {
    const full = [-1, -1];
    const w = (d: number) => [-1 - d, -1];
    const out = attributeSentences("Hi. Yo", { tokenOffsets: [0, 3], full, noContext: full, withoutSet: [w(2), w(5), w(3), w(4), w(0.1)] }, 1);
    expect(out[0]!.topSets).toEqual([1, 3, 2]);
    expect(() => attributeSentences("Hi", { tokenOffsets: [0], full: [-1, -2], noContext: [-1], withoutSet: [] })).toThrow(/full has 2/);
    expect(() => attributeSentences("Hi", { tokenOffsets: [0], full: [-1], noContext: [-1], withoutSet: [] }, -1)).toThrow(/threshold/);
  });
});
