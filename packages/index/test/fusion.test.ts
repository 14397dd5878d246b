import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import {
  ChunkStore,
  DEFAULT_BM25_WEIGHT,
  DEFAULT_FUSION,
  fuseHits,
  hybridCandidates,
  InvalidQueryError,
  LEGACY_RRF_FUSION,
  validateFusion,
  type FusionSettings,
} from "../src/index.js";
import { fakeEmbed, fakeEmbedVector } from "./helpers/fakeEmbedder.mjs";
import { tempDir, testStoreOptions } from "./helpers/tempStore.js";

// One paragraph (one chunk) per document. "zinc" is in three of them: BM25 puts a far ahead (it says zinc
// four times), b and c follow. The query vector is b's own text, so dense puts b first (cosine 1) and a,
// which shares no other word with b, low. RRF (k 60, equal weights) only sees ranks: b (BM25 2nd, dense 1st)
// beats a (BM25 1st, dense low). The convex fusion sees that BM25's gap from a to the rest is large.
const DOCS = [
  { id: "a", text: "Zinc zinc zinc zinc: galvanised sheet." },
  { id: "b", text: "Copper cathode and copper sulfate electrolyte in a simple cell with zinc." },
  { id: "c", text: "The zinc electrode dissolves slowly in the electrolyte of a simple cell." },
  { id: "d", text: "Copper sulfate crystals are blue; a simple test for water." },
  { id: "e", text: "Electrolyte solutions conduct because their ions move in a simple cell." },
  { id: "f", text: "Copper wire and a cathode ray tube sit on the bench." },
];
const QUERY = "zinc";
const VECTOR = fakeEmbedVector(DOCS[1]!.text);
const RRF_EQUAL: FusionSettings = { method: "rrf", rrfK: 60, bm25Weight: 1 };
const CONVEX_HALF: FusionSettings = { method: "convex", bm25Weight: 0.5 };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function openStore(dir: string, create = false): Promise<ChunkStore> {
  const store = await ChunkStore.open(dir, create ? testStoreOptions({ chunker: { maxChars: 200, overlapChars: 0 } }) : {});
  cleanups.push(() => store.close());
  return store;
}

async function newStore(): Promise<{ store: ChunkStore; dir: string }> {
  const tmp = tempDir();
  cleanups.push(() => tmp[Symbol.dispose]());
  const dir = join(tmp.path, "store");
  const store = await openStore(dir, true);
  for (const doc of DOCS) await store.upsertDocument({ ...doc, title: doc.id, source: "test" }, fakeEmbed);
  return { store, dir };
}

const top = (store: ChunkStore, options: Parameters<ChunkStore["searchHybrid"]>[2] = { k: 3 }) =>
  store.searchHybrid(QUERY, VECTOR, options).map((h) => h.docId);

describe("hybrid fusion settings", () => {
  it("fusion - on this corpus RRF and convex fusion disagree about the top hit (the premise of the tests below)", async () => {
    const { store } = await newStore();
    expect(store.searchBm25(QUERY, { k: 3 }).map((h) => h.docId)).toEqual(["a", "b", "c"]);
    const dense = store.searchDense(VECTOR, { k: 10 }).map((h) => h.docId);
    expect(dense[0]).toBe("b");
    expect(dense.indexOf("a")).toBeGreaterThan(2);
    expect(top(store, { k: 1, fusion: RRF_EQUAL })).toEqual(["b"]);
    expect(top(store, { k: 1, fusion: CONVEX_HALF })).toEqual(["a"]);
  });

  it("fusion - a store without a recorded fusion uses DEFAULT_FUSION; setFusion persists across close and reopen", async () => {
    const { store, dir } = await newStore();
    expect(store.hasRecordedFusion).toBe(false);
    expect(store.fusion).toEqual(DEFAULT_FUSION);
    expect(top(store)).toEqual(top(store, { k: 3, fusion: DEFAULT_FUSION }));

    store.setFusion(RRF_EQUAL);
    expect(top(store, { k: 1 })).toEqual(["b"]);
    await store.close();
    const reopened = await openStore(dir);
    expect(reopened.hasRecordedFusion).toBe(true);
    expect(reopened.fusion).toEqual(RRF_EQUAL);
    expect(top(reopened, { k: 1 })).toEqual(["b"]);

    reopened.setFusion(CONVEX_HALF);
    await reopened.close();
    const again = await openStore(dir);
    expect(again.fusion).toEqual(CONVEX_HALF);
    expect(top(again, { k: 1 })).toEqual(["a"]);

    again.setFusion(undefined);
    expect(again.hasRecordedFusion).toBe(false);
    expect(again.fusion).toEqual(DEFAULT_FUSION);
  });

  it("fusion - searchHybrid is fuseHits over searchBm25/searchDense at hybridCandidates(k), so a tuner can replay it offline", async () => {
    const { store } = await newStore();
    const candidates = hybridCandidates(3);
    const bm25 = store.searchBm25(QUERY, { k: candidates });
    const dense = store.searchDense(VECTOR, { k: candidates });
    for (const fusion of [RRF_EQUAL, CONVEX_HALF, DEFAULT_FUSION, LEGACY_RRF_FUSION]) {
      expect(store.searchHybrid(QUERY, VECTOR, { k: 3, fusion }), JSON.stringify(fusion)).toEqual(fuseHits(bm25, dense, 3, fusion));
    }
  });

  it("fusion - an explicit rrfK or bm25Weight means RRF, filling the rest from the store's RRF fusion or the RRF defaults", async () => {
    const { store } = await newStore();
    store.setFusion(CONVEX_HALF);
    const hits = store.searchHybrid(QUERY, VECTOR, { k: 3, rrfK: 60 });
    expect(hits.map((h) => h.docId)).toEqual(top(store, { k: 3, fusion: { method: "rrf", rrfK: 60, bm25Weight: DEFAULT_BM25_WEIGHT } }));
    const a = hits.find((h) => h.docId === "a")!;
    expect(a.score).toBeCloseTo(DEFAULT_BM25_WEIGHT / (60 + a.ranks!.bm25!) + 1 / (60 + a.ranks!.dense!), 12);
    expect(top(store, { k: 1, bm25Weight: 1 })).toEqual(["b"]);

    store.setFusion({ method: "rrf", rrfK: 5, bm25Weight: 1 });
    const b = store.searchHybrid(QUERY, VECTOR, { k: 1, rrfK: 0 })[0]!;
    // rrfK from the call (0), weight from the store (1): 1/(0 + 2) + 1/(0 + 1).
    expect(b.docId).toBe("b");
    expect(b.score).toBeCloseTo(1 / 2 + 1, 12);
  });

  it("fusion - invalid settings are rejected with the field and its allowed range, and nothing is recorded", async () => {
    const { store } = await newStore();
    const cases: [unknown, RegExp][] = [
      [{ method: "convex", bm25Weight: 1.2 }, /fusion\.bm25Weight \(convex λ\) must be from 0 to 1.*got 1\.2/],
      [{ method: "convex", bm25Weight: -0.1 }, /fusion\.bm25Weight \(convex λ\) must be from 0 to 1/],
      [{ method: "rrf", rrfK: -1, bm25Weight: 1 }, /fusion\.rrfK must be ≥ 0.*got -1/],
      [{ method: "rrf", rrfK: 60, bm25Weight: -2 }, /fusion\.bm25Weight \(RRF\) must be ≥ 0/],
      [{ method: "rrf", bm25Weight: 2 }, /fusion\.rrfK must be a finite number, got undefined/],
      [{ method: "convex", bm25Weight: Number.NaN }, /fusion\.bm25Weight must be a finite number/],
      [{ method: "borda", bm25Weight: 1 }, /fusion\.method must be "rrf" or "convex", got "borda"/],
      ["rrf", /fusion must be an object/],
    ];
    for (const [fusion, message] of cases) {
      expect(() => store.setFusion(fusion as FusionSettings), JSON.stringify(fusion)).toThrow(message);
      expect(() => store.setFusion(fusion as FusionSettings)).toThrow(InvalidQueryError);
      expect(() => store.searchHybrid(QUERY, VECTOR, { k: 1, fusion: fusion as FusionSettings }), JSON.stringify(fusion)).toThrow(message);
    }
    expect(store.hasRecordedFusion).toBe(false);
    expect(() => store.searchHybrid(QUERY, VECTOR, { k: 1, fusion: CONVEX_HALF, rrfK: 10 })).toThrow(/either fusion or the RRF options/);
    expect(validateFusion({ method: "convex", bm25Weight: 0, extra: 1 }, "x")).toEqual({ method: "convex", bm25Weight: 0 });
  });

  it("fusion - an unreadable recorded fusion fails hybrid with what to do; BM25 works and setFusion replaces it", async () => {
    const { store, dir } = await newStore();
    await store.close();
    const db = new Database(join(dir, "store.sqlite"));
    db.prepare("INSERT INTO meta(key, value) VALUES ('fusion', ?)").run(JSON.stringify({ method: "learned", bm25Weight: 0.5 }));
    db.close();
    const reopened = await openStore(dir);
    expect(reopened.hasRecordedFusion).toBe(true);
    expect(() => reopened.fusion).toThrow(/records a hybrid fusion this version cannot use .*"learned".*setFusion/);
    expect(() => top(reopened)).toThrow(/cannot use/);
    expect(top(reopened, { k: 1, fusion: CONVEX_HALF })).toEqual(["a"]);
    expect(reopened.searchBm25(QUERY, { k: 1 })[0]!.docId).toBe("a");
    reopened.setFusion(CONVEX_HALF);
    expect(top(reopened, { k: 1 })).toEqual(["a"]);
  });
});
