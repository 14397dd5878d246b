import { describe, expect, it } from "vitest";
import { alignChunkSets } from "../src/alignment/alignChunkSets.js";
import type { RetrievedChunk } from "../src/alignment/chunkSet.js";

function hit(docId: string, ordinal: number, rank: number): RetrievedChunk {
  return { id: `${docId}#${ordinal}`, docId, ordinal, text: `${docId} chunk ${ordinal}`, start: ordinal * 10, end: ordinal * 10 + 9, rank, score: 1 / rank };
}

describe("alignChunkSets", () => {
  it("alignChunkSets - the paper's example: C57 ranked 1st and C59 29th with C58 absent stay two sets", () => {
    const retrieved = [hit("D", 57, 1), ...Array.from({ length: 27 }, (_, i) => hit(`other${i}`, i * 5, i + 2)), hit("D", 59, 29)];
    const sets = alignChunkSets(retrieved);
    const d = sets.filter((s) => s.docId === "D");
    expect(d.map((s) => [s.firstOrdinal, s.lastOrdinal, s.ranks])).toEqual([
      [57, 57, [1]],
      [59, 59, [29]],
    ]);
    expect(sets[0]!.id).toBe("D#57-57");
    expect(sets[sets.length - 1]!.id).toBe("D#59-59");
  });

  it("alignChunkSets - consecutive chunks of one document merge, keeping each chunk's rank in document order", () => {
    const sets = alignChunkSets([hit("D", 58, 3), hit("D", 57, 1), hit("E", 2, 2), hit("D", 59, 7)]);
    expect(sets.map((s) => s.id)).toEqual(["D#57-59", "E#2-2"]);
    expect(sets[0]!.ranks).toEqual([1, 3, 7]);
    expect(sets[0]!.bestRank).toBe(1);
    expect(sets[0]!.chunks.map((c) => c.ordinal)).toEqual([57, 58, 59]);
  });

  it("alignChunkSets - adjacent ordinals of different documents do not merge", () => {
    const sets = alignChunkSets([hit("A", 1, 1), hit("B", 2, 2)]);
    expect(sets.map((s) => s.id)).toEqual(["A#1-1", "B#2-2"]);
  });

  it("alignChunkSets - sets are ordered by best retrieval rank", () => {
    const sets = alignChunkSets([hit("A", 10, 4), hit("B", 1, 2), hit("A", 3, 3), hit("C", 0, 1), hit("A", 11, 5)]);
    expect(sets.map((s) => [s.id, s.bestRank])).toEqual([
      ["C#0-0", 1],
      ["B#1-1", 2],
      ["A#3-3", 3],
      ["A#10-11", 4],
    ]);
  });

  it("alignChunkSets - a chunk retrieved twice counts once at its best rank", () => {
    const sets = alignChunkSets([hit("A", 1, 5), hit("A", 1, 2), hit("A", 2, 9)]);
    expect(sets).toHaveLength(1);
    expect(sets[0]!.ranks).toEqual([2, 9]);
  });

  it("alignChunkSets - empty input gives no sets; bad ranks and ordinals are rejected", () => {
    expect(alignChunkSets([])).toEqual([]);
    expect(() => alignChunkSets([hit("A", -1, 1)])).toThrow(/ordinal/);
    expect(() => alignChunkSets([hit("A", 1, 0)])).toThrow(/rank/);
  });
});
