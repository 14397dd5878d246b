import { DEFAULT_BM25_WEIGHT } from "../src/search/fuseHits.js";
import { chunkDocument } from "@attr-rag/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChunkStore, DocumentNotFoundError, InvalidQueryError, MAX_K } from "../src/index.js";
import { fakeEmbed, fakeEmbedVector } from "./helpers/fakeEmbedder.mjs";
import { makeDocument } from "./helpers/syntheticDocs.mjs";
import { tempStore } from "./helpers/tempStore.js";

// Small chunks so each paragraph of the hand-written documents is a chunk of its own.
const CHUNKER = { maxChars: 80, overlapChars: 0 };

// Six synthetic documents (4 chunks each, sources spread over 3 values) plus two hand-written ones whose
// words do not occur elsewhere, so rankings are predictable.
const SYNTHETIC = ["d0", "d1", "d2", "d3", "d4", "d5"].map((id) => makeDocument(id));
const ASPIRIN = {
  id: "aspirin",
  title: "Aspirin synthesis",
  source: "handbook",
  text:
    "Salicylic acid is acetylated with acetic anhydride.\n\nPhosphoric acid catalyses the acetylation at 85 degrees.\n\n" +
    "The crude aspirin crystallises on cooling and is recrystallised from ethanol.",
};
const PARACETAMOL = {
  id: "paracetamol",
  title: "Paracetamol synthesis",
  source: "handbook",
  text: "4-Aminophenol is acetylated with acetic anhydride in water.\n\nParacetamol precipitates and is collected by suction filtration.",
};

describe("search", () => {
  let t: Awaited<ReturnType<typeof tempStore>>;
  let store: ChunkStore;
  beforeAll(async () => {
    t = await tempStore({ chunker: CHUNKER });
    store = t.store;
    for (const doc of [...SYNTHETIC, ASPIRIN, PARACETAMOL]) await store.upsertDocument(doc, fakeEmbed);
  });
  afterAll(async () => {
    await t?.[Symbol.asyncDispose]();
  });

  it("bm25 - ranks the chunk with the rare query words first; scores descend", () => {
    const hits = store.searchBm25("Which acid catalyses the acetylation?", { k: 5 });
    expect(hits[0]).toMatchObject({ docId: "aspirin", ordinal: 1, chunkId: "aspirin#1" });
    expect(hits[0]!.text).toBe("Phosphoric acid catalyses the acetylation at 85 degrees.");
    expect(ASPIRIN.text.slice(hits[0]!.start, hits[0]!.end)).toBe(hits[0]!.text);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
  });

  it("bm25 - porter stemming matches other word forms", () => {
    const hits = store.searchBm25("crystallising recrystallisation", { k: 3 });
    expect(hits[0]?.chunkId).toBe("aspirin#2");
  });

  it("bm25 - filters by document id and by source; an empty filter list matches nothing", () => {
    const byDoc = store.searchBm25("acetylated acetic anhydride", { k: 10, docIds: ["paracetamol"] });
    expect(byDoc.length).toBeGreaterThan(0);
    expect(byDoc.every((h) => h.docId === "paracetamol")).toBe(true);
    const source = SYNTHETIC[0]!.source;
    const bySource = store.searchBm25("acid base solvent reflux", { k: 100, sources: [source] });
    const wanted = new Set(SYNTHETIC.filter((d) => d.source === source).map((d) => d.id));
    expect(bySource.length).toBeGreaterThan(0);
    expect(bySource.every((h) => wanted.has(h.docId))).toBe(true);
    expect(store.searchBm25("acetylated", { k: 10, docIds: [] })).toEqual([]);
  });

  it("bm25 - FTS5 syntax in user text is treated as words and never throws", () => {
    const nasty = [
      'acid "unbalanced',
      "acet*",
      "acid AND",
      "AND OR NOT",
      "(acid",
      "acid)",
      "-acid",
      "acid - base",
      "NEAR(acid base, 2)",
      "text:acid",
      "^acid",
      "acid + base ; drop table chunks; --",
      "{acid base}",
      "'",
      "ünïcödé Säure 酸",
    ];
    for (const q of nasty) expect(() => store.searchBm25(q, { k: 5 }), q).not.toThrow();
    expect(store.searchBm25('"phosphoric" AND (acid', { k: 1 })[0]?.chunkId).toBe("aspirin#1");
    expect(store.searchBm25("!!! ... ???", { k: 5 })).toEqual([]);
    expect(store.stats().chunks).toBeGreaterThan(0);
  });

  it("bm25 - an empty or huge query and a bad k are InvalidQueryError", () => {
    expect(() => store.searchBm25("", { k: 5 })).toThrow(InvalidQueryError);
    expect(() => store.searchBm25("   ", { k: 5 })).toThrow(/query is empty/);
    expect(() => store.searchBm25("acid ".repeat(3000), { k: 5 })).toThrow(/more than the limit/);
    for (const k of [0, -1, 1.5, MAX_K + 1, Number.NaN, "5" as unknown as number, undefined as unknown as number]) {
      expect(() => store.searchBm25("acid", { k }), String(k)).toThrow(InvalidQueryError);
    }
    expect(() => store.searchBm25("acid", { k: 10, docIds: "aspirin" as unknown as string[] })).toThrow(/docIds must be an array of strings/);
    expect(store.searchBm25("acid", { k: MAX_K }).length).toBeGreaterThan(0);
  });

  it("dense - a chunk's own embedding finds that chunk first with cosine ≈ 1", () => {
    for (const chunk of store.getChunks("aspirin", 0, 10)) {
      const [best] = store.searchDense(fakeEmbedVector(chunk.text), { k: 3 });
      expect(best).toMatchObject({ chunkId: chunk.id, docId: "aspirin", ordinal: chunk.ordinal, start: chunk.start, end: chunk.end, text: chunk.text });
      expect(best!.score).toBeCloseTo(1, 5);
    }
  });

  it("dense - filters over-fetch so a narrow filter still returns k hits", () => {
    const query = fakeEmbedVector(ASPIRIN.text);
    const hits = store.searchDense(query, { k: 2, docIds: ["paracetamol"] });
    expect(hits.map((h) => h.docId)).toEqual(["paracetamol", "paracetamol"]);
    const d3 = chunkDocument("d3", SYNTHETIC[3]!.text, CHUNKER).map((c) => c.id);
    const all = store.searchDense(query, { k: d3.length, docIds: ["d3"] });
    expect(all.map((h) => h.chunkId).sort()).toEqual([...d3].sort());
    const bySource = store.searchDense(query, { k: 50, sources: ["handbook"] });
    expect(new Set(bySource.map((h) => h.docId))).toEqual(new Set(["aspirin", "paracetamol"]));
    expect(store.searchDense(query, { k: 5, sources: ["no-such-source"] })).toEqual([]);
  });

  it("dense - k larger than the store returns every chunk once, best first", () => {
    const hits = store.searchDense(fakeEmbedVector("acid"), { k: 1000 });
    expect(hits).toHaveLength(store.stats().chunks);
    expect(new Set(hits.map((h) => h.chunkId)).size).toBe(hits.length);
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score - 1e-6);
  });

  it("dense - a query vector of the wrong length, non-finite or all zeros is InvalidQueryError", () => {
    expect(() => store.searchDense(new Float32Array(32).fill(1), { k: 5 })).toThrow(/32 dimensions but the store's embedder "fake-hashed-bow-64" has 64/);
    expect(() => store.searchDense(new Float32Array(64).fill(Number.POSITIVE_INFINITY), { k: 5 })).toThrow(InvalidQueryError);
    expect(() => store.searchDense(new Float32Array(64), { k: 5 })).toThrow(/all zeros/);
    expect(() => store.searchDense([1, 2] as unknown as Float32Array, { k: 5 })).toThrow(/must be a Float32Array/);
    expect(() => store.searchDense(fakeEmbedVector("acid"), { k: 0 })).toThrow(InvalidQueryError);
  });

  it("hybrid - an explicit rrfK fuses BM25 and dense with RRF; ranks show where each hit came from", () => {
    const query = "Which acid catalyses the acetylation?";
    // The store's default fusion is convex (fusion.test.ts); rrfK asks for RRF, as gRPC's rrf_k does.
    const hits = store.searchHybrid(query, fakeEmbedVector(query), { k: 5, rrfK: 60 });
    expect(hits).toHaveLength(5);
    expect(hits[0]!.chunkId).toBe("aspirin#1");
    const bm25 = store.searchBm25(query, { k: 50 }).map((h) => h.chunkId);
    const dense = store.searchDense(fakeEmbedVector(query), { k: 50 }).map((h) => h.chunkId);
    for (const hit of hits) {
      const bm25Rank = bm25.indexOf(hit.chunkId) + 1 || undefined;
      const denseRank = dense.indexOf(hit.chunkId) + 1 || undefined;
      expect(hit.ranks).toEqual({ ...(bm25Rank ? { bm25: bm25Rank } : {}), ...(denseRank ? { dense: denseRank } : {}) });
      // BM25 counts DEFAULT_BM25_WEIGHT times, dense once.
      expect(hit.score).toBeCloseTo((bm25Rank ? DEFAULT_BM25_WEIGHT / (60 + bm25Rank) : 0) + (denseRank ? 1 / (60 + denseRank) : 0), 12);
    }
    const plain = store.searchHybrid(query, fakeEmbedVector(query), { k: 5, bm25Weight: 1 });
    for (const hit of plain) {
      const bm25Rank = bm25.indexOf(hit.chunkId) + 1 || undefined;
      const denseRank = dense.indexOf(hit.chunkId) + 1 || undefined;
      expect(hit.score).toBeCloseTo((bm25Rank ? 1 / (60 + bm25Rank) : 0) + (denseRank ? 1 / (60 + denseRank) : 0), 12);
    }
    expect(() => store.searchHybrid(query, fakeEmbedVector(query), { k: 5, bm25Weight: -1 })).toThrow(/bm25Weight/);
  });

  it("hybrid - rrfK and filters apply; a punctuation-only query falls back to the dense ranking", () => {
    const query = "acetic anhydride";
    const hits = store.searchHybrid(query, fakeEmbedVector(query), { k: 3, rrfK: 0, docIds: ["paracetamol"] });
    expect(hits.every((h) => h.docId === "paracetamol")).toBe(true);
    expect(hits[0]!.score).toBeGreaterThan(1); // 1/(0+1) + 1/(0+r): only possible with rrfK = 0
    const vector = fakeEmbedVector("Paracetamol precipitates");
    const fallback = store.searchHybrid("?!", vector, { k: 3 });
    expect(fallback.map((h) => h.chunkId)).toEqual(store.searchDense(vector, { k: 3 }).map((h) => h.chunkId));
    expect(fallback.every((h) => h.ranks?.bm25 === undefined)).toBe(true);
    expect(() => store.searchHybrid("", vector, { k: 3 })).toThrow(InvalidQueryError);
    expect(() => store.searchHybrid(query, vector, { k: 3, rrfK: -1 })).toThrow(/rrfK/);
    expect(() => store.searchHybrid(query, vector, { k: 3, candidates: 0 })).toThrow(/candidates/);
  });

  it("getChunks - inclusive range in order; past the end is clipped, wholly past it is empty", () => {
    const d2 = chunkDocument("d2", SYNTHETIC[2]!.text, CHUNKER);
    const last = d2.length - 1;
    expect(last).toBeGreaterThan(3);
    expect(store.getChunks("d2", 1, 3)).toEqual(d2.slice(1, 4));
    expect(store.getChunks("d2", 2, 2).map((c) => c.id)).toEqual(["d2#2"]);
    expect(store.getChunks("d2", last - 1, last + 50).map((c) => c.ordinal)).toEqual([last - 1, last]);
    expect(store.getChunks("d2", last + 1, last + 10)).toEqual([]);
  });

  it("getChunks - unknown document is DocumentNotFoundError; a malformed range is InvalidQueryError", () => {
    expect(() => store.getChunks("nope", 0, 1)).toThrow(DocumentNotFoundError);
    expect(() => store.getChunks("d2", 3, 1)).toThrow(/first ≤ last/);
    expect(() => store.getChunks("d2", -1, 1)).toThrow(InvalidQueryError);
    expect(() => store.getChunks("d2", 0.5, 1)).toThrow(InvalidQueryError);
  });

  it("stats - counts, embedder and file sizes", () => {
    store.flush();
    const stats = store.stats();
    expect(stats).toMatchObject({
      path: t.dir,
      documents: 8,
      embedder: { id: "fake-hashed-bow-64", dimensions: 64 },
      dimensions: 64,
      quantization: "f16",
      chunker: CHUNKER,
      missingVectors: 0,
      unsavedVectorChanges: false,
      schemaVersion: 3,
    });
    expect(stats.vectors).toBe(stats.chunks);
    expect(stats.files.sqlite).toBeGreaterThan(0);
    expect(stats.files.vectors).toBeGreaterThan(stats.chunks * 64 * 4);
  });
});
