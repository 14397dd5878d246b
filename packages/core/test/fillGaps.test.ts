import { describe, expect, it } from "vitest";
import { fillGaps } from "../src/selection/fillGaps.js";

const refs = (docId: string, ...ordinals: number[]) => ordinals.map((ordinal) => ({ docId, ordinal }));

describe("fillGaps", () => {
  it("fillGaps - the paper's example: 55, 57, 59 → 55..59", () => {
    const r = fillGaps(refs("D", 55, 57, 59));
    expect(r.spans).toEqual([{ docId: "D", first: 55, last: 59 }]);
    expect(r.added).toEqual(refs("D", 56, 58));
    expect(r.unfilled).toEqual([]);
  });

  it("fillGaps - a gap of 3 is not filled with the default maxGap 2", () => {
    const r = fillGaps(refs("D", 55, 58));
    expect(r.spans).toEqual([
      { docId: "D", first: 55, last: 55 },
      { docId: "D", first: 58, last: 58 },
    ]);
    expect(r.added).toEqual([]);
    expect(r.unfilled).toEqual([{ docId: "D", after: 55, before: 58 }]);
    expect(fillGaps(refs("D", 55, 58), 3).added).toEqual(refs("D", 56, 57));
  });

  it("fillGaps - never bridges documents and keeps documents in first-selected order", () => {
    const r = fillGaps([...refs("B", 4), ...refs("A", 1), ...refs("B", 6), ...refs("A", 2)]);
    expect(r.spans).toEqual([
      { docId: "B", first: 4, last: 6 },
      { docId: "A", first: 1, last: 2 },
    ]);
    expect(r.added).toEqual(refs("B", 5));
  });

  it("fillGaps - duplicates and unsorted input are handled; maxGap 0 only merges adjacent chunks", () => {
    expect(fillGaps(refs("D", 9, 7, 7, 8)).spans).toEqual([{ docId: "D", first: 7, last: 9 }]);
    const strict = fillGaps(refs("D", 1, 2, 4), 0);
    expect(strict.spans).toEqual([
      { docId: "D", first: 1, last: 2 },
      { docId: "D", first: 4, last: 4 },
    ]);
    expect(strict.added).toEqual([]);
  });

  it("fillGaps - empty selection and bad arguments", () => {
    expect(fillGaps([])).toEqual({ spans: [], added: [], unfilled: [] });
    expect(() => fillGaps(refs("D", 1), -1)).toThrow(/maxGap/);
    expect(() => fillGaps(refs("D", 1.5))).toThrow(/ordinal/);
  });
});
