import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ChunkStore } from "../src/index.js";
import { Bm25Search } from "../src/search/bm25Search.js";
import { Bm25TopK } from "../src/search/bm25TopK.js";
import { fakeEmbed } from "./helpers/fakeEmbedder.mjs";
import { tempDir, tempStore, testStoreOptions } from "./helpers/tempStore.js";
import { queries, rng, syntheticText } from "./helpers/zipfCorpus.js";

// A store whose documents are replaced over and over deletes chunks without end, and AUTOINCREMENT never
// reuses their rowids. A BM25 search thread (Bm25Pool runs a Bm25TopK over a read-only connection, as here)
// must hold memory in proportion to the live chunks, not to the highest rowid or to every deletion, and rank
// exactly as a store that only ever held the final documents.
const OPTIONS = { chunker: { maxChars: 400, overlapChars: 0 } };
const DOCS = 12;

function version(v: number): { id: string; text: string }[] {
  const rand = rng(1000 + v);
  return Array.from({ length: DOCS }, (_, d) => ({ id: `c${d}`, text: Array.from({ length: 3 }, () => syntheticText(rand, 50)).join("\n\n") }));
}

describe("bm25 under churn", () => {
  it("bm25 churn - a search thread through documents replaced 40 times holds memory bounded by the live chunks, and ranks as a fresh store does", async () => {
    using dir = tempDir();
    const path = join(dir.path, "store");
    await (await ChunkStore.open(path, testStoreOptions(OPTIONS))).close();
    // The long history first: rowids past a million, where a store that has written a million chunks puts
    // them (writing them here would take minutes). AUTOINCREMENT counts on from sqlite_sequence.
    const raw = new Database(join(path, "store.sqlite"));
    raw.exec("INSERT OR REPLACE INTO sqlite_sequence (name, seq) VALUES ('chunks', 1000000)");
    raw.close();
    const store = await ChunkStore.open(path, { ...testStoreOptions(OPTIONS), create: false });
    const db = new Database(join(path, "store.sqlite"), { readonly: true });
    try {
      const thread = new Bm25TopK(db, new Bm25Search(db));
      const asks = queries(rng(5), 20);
      // Every version replaces every document (new chunks, new rowids), and the thread searches between them,
      // so it reads each version's chunks before they are deleted.
      for (let v = 0; v <= 40; v++) {
        for (const doc of version(v)) await store.upsertDocument(doc, fakeEmbed);
        for (const q of asks.slice(0, 2)) thread.search(q, 10, {});
      }
      const live = (db.prepare("SELECT count(*) FROM chunks").pluck().get() as number);
      const deleted = (db.prepare("SELECT count(*) FROM term_postings_dead").pluck().get() as number);
      expect(deleted).toBeGreaterThan(30 * live);

      const held = thread.held();
      // Dense arrays over a million rowids would hold 12 MB.
      expect(held.accumulatorBytes).toBeLessThan(200_000);
      expect(held.deadRows).toBeLessThanOrEqual(live);
      expect(held.tailChunks).toBeLessThanOrEqual(2 * live);

      await using fresh = await tempStore(OPTIONS);
      for (const doc of version(40)) await fresh.store.upsertDocument(doc, fakeEmbed);
      for (const q of asks) {
        const want = fresh.store.searchBm25(q, { k: 10 });
        expect(want.length).toBeGreaterThan(0);
        expect(thread.search(q, 10, {}), q).toEqual(want);
        expect(store.searchBm25(q, { k: 10 }), q).toEqual(want);
        expect(store.searchBm25(q, { k: 10, bm25Method: "exhaustive" }), q).toEqual(fresh.store.searchBm25(q, { k: 10, bm25Method: "exhaustive" }));
      }
    } finally {
      db.close();
      await store.close();
    }
  });
});
