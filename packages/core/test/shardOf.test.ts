import { describe, expect, it } from "vitest";
import { parseShardSpec, shardOf } from "../src/index.js";

describe("shardOf", () => {
  it("shardOf - FNV-1a of the id's UTF-8 bytes modulo the shard count (published FNV-1a vectors)", () => {
    // FNV-1a 32: "" → 0x811c9dc5, "a" → 0xe40c292c, "foobar" → 0xbf9cf968.
    expect(shardOf("", 1 << 30)).toBe(0x811c9dc5 % (1 << 30));
    expect(shardOf("a", 1000)).toBe(0xe40c292c % 1000);
    expect(shardOf("foobar", 7)).toBe(0xbf9cf968 % 7);
    // UTF-8, not UTF-16 code units: "é" is the two bytes c3 a9.
    let h = 0x811c9dc5;
    for (const b of [0xc3, 0xa9]) h = Math.imul(h ^ b, 0x01000193) >>> 0;
    expect(shardOf("é", 97)).toBe(h % 97);
  });

  it("shardOf - one shard holds everything; many ids spread over every shard", () => {
    const ids = Array.from({ length: 3000 }, (_, i) => `doc-${i}`);
    expect(new Set(ids.map((id) => shardOf(id, 1)))).toEqual(new Set([0]));
    const counts = [0, 0, 0];
    for (const id of ids) counts[shardOf(id, 3)]!++;
    for (const c of counts) expect(c).toBeGreaterThan(800);
    expect(() => shardOf("x", 0)).toThrow(/integer ≥ 1/);
  });

  it("parseShardSpec - i/S from 0, with the reason when it is not", () => {
    expect(parseShardSpec("1/3", 64)).toEqual({ shard: 1, shards: 3 });
    expect(parseShardSpec(" 0 / 1 ", 64)).toEqual({ shard: 0, shards: 1 });
    expect(() => parseShardSpec("3/3", 64)).toThrow(/counted from 0/);
    expect(() => parseShardSpec("0/65", 64)).toThrow(/from 1 to 64/);
    expect(() => parseShardSpec("two", 64)).toThrow(/must be i\/S/);
  });
});
