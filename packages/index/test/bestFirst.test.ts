import { describe, expect, it } from "vitest";
import { bestFirst } from "../src/search/bestFirst.js";
import { rng } from "./helpers/syntheticDocs.mjs";

describe("bestFirst", () => {
  it("gives FTS5's rows in ORDER BY rank, rowid order, ties by rowid, lazily", () => {
    const random = rng(11);
    // Few distinct ranks, so most rows tie with others; rowids unordered.
    const rows = Array.from({ length: 5_000 }, (_, i) => [((i * 7_919) % 5_000) + 1, -Math.floor(random() * 40) / 8] as const);
    const sorted = [...rows].sort((a, b) => a[1] - b[1] || a[0] - b[0]).map(([rowid, rank]) => ({ rowid, partial: -rank }));
    expect([...bestFirst(rows)]).toEqual(sorted);
    const first = bestFirst(rows);
    expect([0, 1, 2].map(() => first.next().value)).toEqual(sorted.slice(0, 3));
    expect([...bestFirst([])]).toEqual([]);
  });
});
