import { describe, expect, it } from "vitest";
import { decodeTermCounts, encodeTermCounts, termCountsOf } from "../src/sqlite/chunkTermCounts.js";
import { rng } from "./helpers/zipfCorpus.js";

// BM25 completion reads a few terms' counts straight from a chunk's blob instead of decoding it into a map:
// the two must agree for every id asked, present or not, small or past a varint's one-byte range.
describe("chunk term counts", () => {
  it("termCountsOf gives decodeTermCounts' count (0 when absent) for any ascending ids", () => {
    const random = rng(7);
    for (let trial = 0; trial < 200; trial++) {
      const ids = new Set<number>();
      const n = Math.floor(random() * 120);
      while (ids.size < n) ids.add(1 + Math.floor(random() * (random() < 0.2 ? 3_000_000 : 500)));
      const pairs = [...ids].sort((a, b) => a - b).map((id) => [id, 1 + Math.floor(random() * (random() < 0.1 ? 1000 : 4))] as const);
      const blob = encodeTermCounts(pairs);
      const map = decodeTermCounts(blob);
      const asked = new Set<number>();
      for (let i = 0; i < 8; i++) asked.add(random() < 0.5 && pairs.length > 0 ? pairs[Math.floor(random() * pairs.length)]![0] : 1 + Math.floor(random() * 3_000_001));
      const wanted = [...asked].sort((a, b) => a - b);
      const out = [99, 99, 99];
      termCountsOf(blob, wanted, out);
      expect(out.slice(0, wanted.length)).toEqual(wanted.map((id) => map.get(id) ?? 0));
    }
    const out: number[] = [];
    termCountsOf(new Uint8Array(0), [1, 5], out);
    expect(out).toEqual([0, 0]);
  });
});
