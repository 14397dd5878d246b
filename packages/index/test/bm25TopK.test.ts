import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SearchHit, SearchOptions } from "../src/index.js";
import { fakeEmbed } from "./helpers/fakeEmbedder.mjs";
import { storeViolations } from "./helpers/inspectStore.js";
import { tempStore, testStoreOptions } from "./helpers/tempStore.js";
import Database from "better-sqlite3";
import { ChunkStore } from "../src/index.js";
import { queries, rng, syntheticText } from "./helpers/zipfCorpus.js";

// BM25 top-k must be FTS5's exhaustive ranking, exactly: the same chunks, in the same order (ties by rowid),
// with the same scores up to floating-point summation order. Checked on a Zipf corpus with English function
// words (so questions have the common words that make pruning matter) and on every public data set here.

function expectSameRanking(topk: SearchHit[], exhaustive: SearchHit[], what: string): void {
  expect(topk.map((h) => h.chunkId), what).toEqual(exhaustive.map((h) => h.chunkId));
  topk.forEach((h, i) => {
    const ref = exhaustive[i]!.score;
    expect(Math.abs(h.score - ref) / Math.max(1e-300, Math.abs(ref)), `${what}: score of ${h.chunkId}`).toBeLessThanOrEqual(1e-9);
  });
}

function compare(store: ChunkStore, query: string, options: SearchOptions): { bounded: number; passes: number; scoredAll: boolean } {
  const topk = store.searchBm25(query, options);
  const trace = store.lastBm25Trace;
  const exhaustive = store.searchBm25(query, { ...options, bm25Method: "exhaustive" });
  expectSameRanking(topk, exhaustive, `${JSON.stringify(query)} k=${options.k}`);
  return { bounded: trace.boundedPhrases, passes: trace.passes, scoredAll: trace.completionsCapped === true };
}

describe("bm25 top-k (synthetic Zipf corpus)", () => {
  let t: Awaited<ReturnType<typeof tempStore>>;
  beforeAll(async () => {
    // Postings in batches of 64 chunks: most of them scored from term_postings, the last few from the tail.
    t = await tempStore({ chunker: { maxChars: 400, overlapChars: 0 }, postingsBatch: 64 });
    const rand = rng(7);
    for (let d = 0; d < 300; d++) {
      const text = Array.from({ length: 3 }, () => syntheticText(rand, 40 + Math.floor(rand() * 60))).join("\n\n");
      await t.store.upsertDocument({ id: `z${d}`, title: `Z ${d}`, text, source: `s${d % 3}` }, fakeEmbed);
    }
  });
  afterAll(async () => {
    await t?.[Symbol.asyncDispose]();
  });

  it("bm25 top-k - the pruning path over term_postings (probe, bounds, completion) ranks exactly as FTS5 too", async () => {
    // A second handle on the same file is refused (the store's lock), so the same documents go into a store
    // that never scores outright: every unfiltered query above SMALL_POSTINGS takes the probe and the bounds.
    await using pruned = await tempStore({ chunker: { maxChars: 400, overlapChars: 0 }, postingsBatch: 64, bm25OwnScan: 0 });
    // Its rowids start past a million, as in a store whose chunks have been replaced for long (AUTOINCREMENT
    // counts on from sqlite_sequence): the scores' pages are few and far apart (the store above has them dense).
    const raw = new Database(join(pruned.dir, "store.sqlite"));
    raw.exec("INSERT OR REPLACE INTO sqlite_sequence (name, seq) VALUES ('chunks', 1000000)");
    raw.close();
    const rand = rng(7);
    for (let d = 0; d < 300; d++) {
      const text = Array.from({ length: 3 }, () => syntheticText(rand, 40 + Math.floor(rand() * 60))).join("\n\n");
      await pruned.store.upsertDocument({ id: `z${d}`, title: `Z ${d}`, text, source: `s${d % 3}` }, fakeEmbed);
    }
    const check = new Database(join(pruned.dir, "store.sqlite"), { readonly: true });
    expect(check.prepare("SELECT min(rowid) FROM chunks").pluck().get()).toBeGreaterThan(1_000_000);
    check.close();
    for (let d = 0; d < 10; d++) pruned.store.deleteDocument(`z${d * 7}`);
    let bounded = 0;
    for (const q of queries(rng(41), 60)) for (const k of [1, 30]) if (compare(pruned.store, q, { k }).bounded > 0) bounded++;
    expect(bounded).toBeGreaterThanOrEqual(5);
    // Two words with one stem ("reaction reactions") are two phrases of one token: each adds its share.
    let doubled = 0;
    for (const q of queries(rng(43), 20)) {
      const query = `${q} ${q.split(/\s+/).map((w) => `${w}s`).join(" ")}`;
      if (compare(pruned.store, query, { k: 30 }).bounded > 0) doubled++;
    }
    expect(doubled).toBeGreaterThanOrEqual(5);
  });

  it("bm25 top-k - 300 queries at k 1, 10 and 30 rank exactly as FTS5's exhaustive bm25 (ids, order, scores ≤ 1e-9), many with common words bounded", () => {
    const rand = rng(11);
    let bounded = 0;
    let scoredAll = 0;
    let total = 0;
    for (const q of queries(rand, 100)) {
      for (const k of [1, 10, 30]) {
        const trace = compare(t.store, q, { k });
        total++;
        if (trace.bounded > 0) bounded++;
        if (trace.scoredAll) scoredAll++;
      }
    }
    // The pruning path is what is under test (queries with few postings in all go to FTS5 whole, which is
    // cheaper): many leave their common words to the bounds.
    expect(bounded).toBeGreaterThanOrEqual(25);
    // Others start pruning and then score every posting, when completing their rows would cost more (a small
    // corpus has few postings to score): the same ranking either way.
    expect(scoredAll).toBeGreaterThanOrEqual(5);
    expect(total).toBe(300);
  });

  it("bm25 top-k - with document and source filters, word forms FTS5 stems alike, repeated and unknown words, the same ranking", () => {
    const rand = rng(13);
    for (const q of queries(rand, 30)) {
      compare(t.store, q, { k: 10, sources: ["s1"] });
      compare(t.store, q, { k: 5, docIds: ["z1", "z2", "z3", "z40", "z77"] });
    }
    for (const q of ["the the THE of", "what is the", "Reacting reacts reacted react", "zzzunknownword the of", "é ê e\u0301 naïve naive", "5α-reductase C6H12O6 pH 7.4"]) {
      compare(t.store, q, { k: 30 });
    }
  });

  it("bm25 top-k - the document frequencies it reads stay FTS5's through replacements and deletions", async () => {
    const rand = rng(17);
    for (let d = 0; d < 20; d++) await t.store.upsertDocument({ id: `z${d}`, title: "replaced", text: syntheticText(rand, 120) }, fakeEmbed);
    for (let d = 20; d < 30; d++) t.store.deleteDocument(`z${d}`);
    // The deleted and replaced chunks are still in their postings batches: they must never come back.
    for (const q of queries(rand, 20)) compare(t.store, q, { k: 10 });
    for (const q of ["the of and", "what is the"]) compare(t.store, q, { k: 30 });
    await t.store.close();
    expect(storeViolations(t.dir)).toEqual([]);
  });
});

describe("bm25 top-k on a store from before schema v2", () => {
  it("bm25 top-k - opening a v1 store records its document frequencies and token counts (with progress), and ranks as FTS5 does", async () => {
    const rand = rng(31);
    await using t = await tempStore({ chunker: { maxChars: 400, overlapChars: 0 } });
    for (let d = 0; d < 60; d++) await t.store.upsertDocument({ id: `v${d}`, text: Array.from({ length: 3 }, () => syntheticText(rand, 80)).join("\n\n") }, fakeEmbed);
    const dir = t.store.path;
    await t.store.close();
    // Back to v1 as an older build left it: no term tables, user_version 1.
    const db = new Database(join(dir, "store.sqlite"));
    db.exec(
      "DROP TRIGGER chunks_after_delete_term_counts; DROP TABLE chunk_term_counts; DROP TABLE chunks_fts_terms; DROP TABLE term_postings; DROP TABLE term_postings_upto; DROP TRIGGER chunks_after_delete_postings; DROP TABLE term_postings_dead; DELETE FROM meta WHERE key = 'chunk_term_counts_complete'; PRAGMA user_version = 1;",
    );
    db.close();
    const lines: string[] = [];
    const store = await ChunkStore.open(dir, { ...testStoreOptions({ chunker: { maxChars: 400, overlapChars: 0 } }), create: false, onProgress: (l) => lines.push(l), postingsBatch: 50 });
    try {
      expect(lines.some((l) => /recording the token counts of older chunks for BM25: (\d+)\/\1$/.test(l))).toBe(true);
      // Then its postings, in whole batches of 50 (the rest is scored from the token counts until a batch fills).
      const written = lines.filter((l) => l.startsWith("writing BM25 postings of older chunks: ")).at(-1);
      expect(written).toMatch(/: (\d+)\/(\d+)$/);
      const [, done, total] = /: (\d+)\/(\d+)$/.exec(written!)!.map(Number);
      expect(done! % 50).toBe(0);
      expect(total! - done!).toBeLessThan(50);
      for (const q of queries(rand, 30)) compare(store, q, { k: 10 });
    } finally {
      await store.close();
    }
    expect(storeViolations(dir)).toEqual([]);
  });
});

const DATA = join(dirname(fileURLToPath(import.meta.url)), "../../../../shared/data");
const SETS = ["chemlitqa-train", "chemex-like-train"].filter((s) => existsSync(join(DATA, s, "corpus.jsonl")));

describe.skipIf(SETS.length === 0)(`bm25 top-k on the public data sets${SETS.length === 0 ? " (skipped: ../shared/data is not beside this checkout)" : ""}`, () => {
  for (const set of SETS) {
    it(`bm25 top-k - every question of ${set} at k 30: FTS5's exhaustive ranking exactly`, async () => {
      // Batches of 256 chunks: the sets' chunks are mostly scored from term_postings.
      await using t = await tempStore({ chunker: undefined, postingsBatch: 256 });
      const docs = readFileSync(join(DATA, set, "corpus.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { id: string; title: string; text: string; source: string });
      for (const doc of docs) await t.store.upsertDocument({ id: doc.id, title: doc.title, text: doc.text, source: doc.source }, fakeEmbed);
      const questions = readFileSync(join(DATA, set, "questions.jsonl"), "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { question: string }).question);
      let bounded = 0;
      for (const q of questions) if (compare(t.store, q, { k: 30 }).bounded > 0) bounded++;
      expect(bounded).toBeGreaterThan(0);
      expect(storeViolations(t.dir)).toEqual([]);
    });
  }
});
