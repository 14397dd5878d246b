import { DEFAULT_BM25_WEIGHT } from "../src/search/fuseHits.js";
import { status } from "@grpc/grpc-js";
import { IngestStatus, RetrievalMode, type SearchRequest } from "@attr-rag/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chunkDocument } from "@attr-rag/core";
import { markerOf, makeDocument, TEST_CHUNKER } from "./helpers/syntheticDocs.mjs";
import { fakeEmbedVector } from "./helpers/fakeEmbedder.mjs";
import { call, ingest, startTestServer, statusOf, type TestServer } from "./helpers/serviceHarness.js";

// One server for the whole file: three synthetic documents (4 chunks each, one per paragraph) ingested
// first, then read, searched, deleted, with seven background documents so that searches have more than 30
// chunks to choose from whichever tests ran before. Tests that change the index use their own document ids.
const DOCS = ["a", "b", "c"].map((id) => makeDocument(id));
const BACKGROUND = Array.from({ length: 7 }, (_, i) => makeDocument(`bg${i}`));

function searchRequest(query: string, options: Partial<NonNullable<SearchRequest["options"]>> = {}): SearchRequest {
  return { query, options: { mode: RetrievalMode.RETRIEVAL_MODE_UNSPECIFIED, ...options }, includeQueryEmbedding: false };
}

describe("IndexService over gRPC", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ maxDocumentBytes: 4_000 });
    const res = await ingest(t.client, [...DOCS, ...BACKGROUND]);
    expect(res.indexed).toBe(10);
  });
  afterAll(async () => {
    await t?.[Symbol.asyncDispose]();
  });

  it("IngestDocuments - indexes new documents and reports each with its chunk count", async () => {
    const docs = ["n1", "n2"].map((id) => makeDocument(id));
    const res = await ingest(t.client, docs);
    expect(res.results).toEqual([
      { docId: "n1", status: IngestStatus.INGEST_STATUS_INDEXED, chunkCount: 4, message: "" },
      { docId: "n2", status: IngestStatus.INGEST_STATUS_INDEXED, chunkCount: 4, message: "" },
    ]);
    expect(res).toMatchObject({ indexed: 2, unchanged: 0, replaced: 0, failed: 0, chunksAdded: 8, chunksRemoved: 0 });
    expect(res.elapsedMs).toBeGreaterThan(0);
    expect(t.store.getDocument("n2")?.title).toBe("Procedure n2");
  });

  it("IngestDocuments - re-ingest is unchanged, new text replaces, and a bad document fails only itself", async () => {
    await ingest(t.client, [makeDocument("r1"), makeDocument("r2"), makeDocument("r3")]);
    const callsBefore = t.embedder.calls;
    const res = await ingest(t.client, [
      makeDocument("r1"), // same content: unchanged, not re-embedded
      { id: "r-empty", text: "   " }, // no text
      makeDocument("r2", 2, 3), // new text, 3 chunks instead of 4
      { id: "r-huge", text: "x ".repeat(3_000) }, // over maxDocumentBytes (4000)
      { id: "", text: "an id is missing" },
      { ...makeDocument("r3"), title: "Procedure r3, revised" }, // metadata only
      makeDocument("r4"), // after the failures: still indexed
    ]);
    expect(res.results.map((r) => [r.docId, r.status, r.chunkCount])).toEqual([
      ["r1", IngestStatus.INGEST_STATUS_UNCHANGED, 4],
      ["r-empty", IngestStatus.INGEST_STATUS_FAILED, 0],
      ["r2", IngestStatus.INGEST_STATUS_REPLACED, 3],
      ["r-huge", IngestStatus.INGEST_STATUS_FAILED, 0],
      ["", IngestStatus.INGEST_STATUS_FAILED, 0],
      ["r3", IngestStatus.INGEST_STATUS_REPLACED, 4],
      ["r4", IngestStatus.INGEST_STATUS_INDEXED, 4],
    ]);
    expect(res.results[1]!.message).toMatch(/has no text/);
    expect(res.results[3]!.message).toMatch(/6000 bytes, more than the limit of 4000/);
    expect(res.results[4]!.message).toMatch(/id must be a non-empty string/);
    expect(res.results.filter((r) => r.status !== IngestStatus.INGEST_STATUS_FAILED).every((r) => r.message === "")).toBe(true);
    expect(res).toMatchObject({ indexed: 1, unchanged: 1, replaced: 2, failed: 3, chunksAdded: 7, chunksRemoved: 4 });
    expect(t.embedder.calls - callsBefore).toBe(2); // r2 v2 and r4 only
    expect(t.store.getDocument("r3")?.title).toBe("Procedure r3, revised");
    expect(t.store.getDocument("r-empty")).toBeUndefined();
  });

  it("IngestDocuments - documents that arrive while others are written go in groups; a bad one in a group fails only itself", async () => {
    t.embedder.delayMs = 30;
    try {
      // 1 alone, then the 32 that arrived meanwhile in one group (about 128 chunks: two embed calls), then 7.
      const callsBefore = t.embedder.calls;
      const fast = await ingest(t.client, Array.from({ length: 40 }, (_, i) => makeDocument(`g${i}`)));
      expect(fast).toMatchObject({ indexed: 40, failed: 0, chunksAdded: fast.results.reduce((n, r) => n + r.chunkCount, 0) });
      expect(t.store.getDocument("g39")?.chunkCount).toBe(fast.results[39]!.chunkCount);
      expect(fast.results.map((r) => r.docId)).toEqual(Array.from({ length: 40 }, (_, i) => `g${i}`));
      expect(t.embedder.calls - callsBefore).toBeLessThan(10);

      const g3v1 = fast.results[3]!.chunkCount;
      const [g3v2, g3v3] = [makeDocument("g3", 2, 3), makeDocument("g3", 3, 5)];
      const mixed = await ingest(t.client, [
        ...Array.from({ length: 6 }, (_, i) => makeDocument(`m${i}`)),
        { id: "m-empty", text: "   " }, // fails the group's validation: every document goes again alone
        g3v2, // replaces a document of the first stream
        makeDocument("m7"),
        g3v3, // the same id again, later in the stream: replaces the version just above
      ]);
      const chunks = (doc: { id: string; text: string }) => chunkDocument(doc.id, doc.text, TEST_CHUNKER).length;
      expect(mixed.results.map((r) => [r.docId, r.status, r.chunkCount])).toEqual([
        ...Array.from({ length: 6 }, (_, i) => [`m${i}`, IngestStatus.INGEST_STATUS_INDEXED, chunks(makeDocument(`m${i}`))]),
        ["m-empty", IngestStatus.INGEST_STATUS_FAILED, 0],
        ["g3", IngestStatus.INGEST_STATUS_REPLACED, chunks(g3v2)],
        ["m7", IngestStatus.INGEST_STATUS_INDEXED, chunks(makeDocument("m7"))],
        ["g3", IngestStatus.INGEST_STATUS_REPLACED, chunks(g3v3)],
      ]);
      expect(mixed.results[6]!.message).toMatch(/has no text/);
      expect(mixed).toMatchObject({ indexed: 7, replaced: 2, failed: 1, chunksRemoved: g3v1 + chunks(g3v2) });
      expect(t.store.getDocument("g3")?.chunkCount).toBe(chunks(g3v3));
    } finally {
      t.embedder.delayMs = 0;
    }
  });

  it("IngestDocuments - a failing document keeps its previous version", async () => {
    await ingest(t.client, [makeDocument("keep")]);
    t.embedder.failWith = new Error("GPU fell off the bus at /opt/secret/model.bin");
    try {
      const res = await ingest(t.client, [makeDocument("keep", 2)]);
      expect(res.results[0]).toMatchObject({ docId: "keep", status: IngestStatus.INGEST_STATUS_FAILED, chunkCount: 4 });
      expect(res.results[0]!.message).toMatch(/^internal error in IngestDocuments \(ref [0-9a-f]{8}\)/);
      expect(res.results[0]!.message).not.toContain("secret");
      expect(t.logs.at(-1)).toContain("/opt/secret/model.bin");
    } finally {
      t.embedder.failWith = undefined;
    }
    const hits = await call(t.client, t.client.search, searchRequest(markerOf("keep", 1), { mode: RetrievalMode.RETRIEVAL_MODE_BM25, filter: { docIds: ["keep"], sources: [] } }));
    expect(hits.chunks).toHaveLength(4);
  });

  it("Search - dense (and unspecified) mode ranks a chunk's own text first", async () => {
    const target = t.store.getChunks("b", 2, 2)[0]!;
    for (const mode of [RetrievalMode.RETRIEVAL_MODE_DENSE, RetrievalMode.RETRIEVAL_MODE_UNSPECIFIED]) {
      const res = await call(t.client, t.client.search, searchRequest(target.text, { k: 5, mode }));
      expect(res.mode).toBe(RetrievalMode.RETRIEVAL_MODE_DENSE);
      expect(res.embedder).toBe("fake-hashed-bow-64");
      expect(res.chunks).toHaveLength(5);
      const top = res.chunks[0]!;
      expect(top.chunk).toEqual({ id: "b#2", docId: "b", ordinal: 2, start: target.start, end: target.end, text: target.text, docTitle: "Procedure b", source: DOCS[1]!.source });
      expect(top.score).toBeCloseTo(1, 5);
      expect(top).toMatchObject({ rank: 1, denseRank: 1 });
      expect(top.denseScore).toBeCloseTo(top.score, 10);
      expect(res.chunks.map((c) => c.rank)).toEqual([1, 2, 3, 4, 5]);
    }
  });

  it("Search - bm25 finds the chunks carrying a document's marker word", async () => {
    const res = await call(t.client, t.client.search, searchRequest(markerOf("c", 1), { k: 10, mode: RetrievalMode.RETRIEVAL_MODE_BM25 }));
    expect(res.mode).toBe(RetrievalMode.RETRIEVAL_MODE_BM25);
    expect(res.embedder).toBe("");
    expect(res.chunks.map((c) => c.chunk!.id).sort()).toEqual(["c#0", "c#1", "c#2", "c#3"]);
    expect(res.chunks[0]).toMatchObject({ rank: 1, bm25Rank: 1 });
    expect(res.chunks[0]!.denseRank).toBeUndefined();
  });

  it("Search - hybrid fuses both rankings with the requested rrf_k", async () => {
    const target = t.store.getChunks("a", 1, 1)[0]!;
    const res = await call(t.client, t.client.search, searchRequest(target.text, { k: 3, mode: RetrievalMode.RETRIEVAL_MODE_HYBRID, rrfK: 10 }));
    expect(res.mode).toBe(RetrievalMode.RETRIEVAL_MODE_HYBRID);
    const top = res.chunks[0]!;
    expect(top.chunk!.id).toBe("a#1");
    expect(top).toMatchObject({ rank: 1, denseRank: 1, bm25Rank: 1 });
    expect(top.score).toBeCloseTo((DEFAULT_BM25_WEIGHT + 1) / 11, 10);
  });

  it("Search - filters by document id and by source; empty lists do not restrict", async () => {
    const query = "acid solvent reflux";
    const byDoc = await call(t.client, t.client.search, searchRequest(query, { k: 20, filter: { docIds: ["a", "c"], sources: [] } }));
    expect(byDoc.chunks.length).toBe(8);
    expect(new Set(byDoc.chunks.map((c) => c.chunk!.docId))).toEqual(new Set(["a", "c"]));

    const source = DOCS[0]!.source;
    const bySource = await call(t.client, t.client.search, searchRequest(query, { k: 50, mode: RetrievalMode.RETRIEVAL_MODE_HYBRID, filter: { docIds: [], sources: [source] } }));
    expect(bySource.chunks.length).toBeGreaterThan(0);
    expect(bySource.chunks.every((c) => c.chunk!.source === source)).toBe(true);

    const both = await call(t.client, t.client.search, searchRequest(query, { k: 50, filter: { docIds: ["a"], sources: ["no-such-source"] } }));
    expect(both.chunks).toEqual([]);

    const unrestricted = await call(t.client, t.client.search, searchRequest(query, { k: 50, mode: RetrievalMode.RETRIEVAL_MODE_BM25, filter: { docIds: [], sources: [] } }));
    expect(new Set(unrestricted.chunks.map((c) => c.chunk!.docId)).size).toBeGreaterThan(3);
  });

  it("Search - k defaults to 30 and is bounded: k = 0, k = 10^6, an empty or over-long query and an unknown mode are INVALID_ARGUMENT", async () => {
    const unset = await call(t.client, t.client.search, { query: "acid", options: undefined, includeQueryEmbedding: false });
    expect(unset.chunks.length).toBe(30);
    const bad: [SearchRequest, RegExp][] = [
      [searchRequest("acid", { k: 0 }), /options\.k must be from 1 to 10000, got 0/],
      [searchRequest("acid", { k: 1_000_000 }), /options\.k must be from 1 to 10000, got 1000000/],
      [searchRequest("   "), /query is empty/],
      [searchRequest("a".repeat(10_001)), /10001 characters, more than the limit of 10000/],
      [searchRequest("acid", { mode: 9 as RetrievalMode }), /options\.mode 9 is not a RetrievalMode/],
    ];
    for (const [request, details] of bad) {
      const s = await statusOf(call(t.client, t.client.search, request));
      expect(s.code).toBe(status.INVALID_ARGUMENT);
      expect(s.details).toMatch(details);
    }
  });

  it("GetChunks - returns inclusive ranges in request order and skips ordinals past the end", async () => {
    const res = await call(t.client, t.client.getChunks, {
      ranges: [
        { docId: "a", firstOrdinal: 1, lastOrdinal: 2 },
        { docId: "b", firstOrdinal: 3, lastOrdinal: 10 },
        { docId: "a", firstOrdinal: 0, lastOrdinal: 0 },
        { docId: "c", firstOrdinal: 7, lastOrdinal: 9 },
      ],
    });
    expect(res.chunks.map((c) => c.id)).toEqual(["a#1", "a#2", "b#3", "a#0"]);
    const a1 = res.chunks[0]!;
    expect(a1.text).toBe(DOCS[0]!.text.slice(a1.start, a1.end));
    expect(a1).toMatchObject({ docId: "a", ordinal: 1, docTitle: "Procedure a", source: DOCS[0]!.source });
  });

  it("GetChunks - an unknown document is NOT_FOUND and last < first is INVALID_ARGUMENT", async () => {
    const missing = await statusOf(call(t.client, t.client.getChunks, { ranges: [{ docId: "nope", firstOrdinal: 0, lastOrdinal: 1 }] }));
    expect(missing.code).toBe(status.NOT_FOUND);
    expect(missing.details).toMatch(/document "nope" is not in the store/);
    const reversed = await statusOf(call(t.client, t.client.getChunks, { ranges: [{ docId: "a", firstOrdinal: 3, lastOrdinal: 1 }] }));
    expect(reversed.code).toBe(status.INVALID_ARGUMENT);
    expect(reversed.details).toMatch(/ranges\[0\] \(a\): last_ordinal 1 is before first_ordinal 3/);
  });

  it("DeleteDocument - removes the document with its chunks; deleting again is found = false (idempotent)", async () => {
    await ingest(t.client, [makeDocument("gone")]);
    expect(await call(t.client, t.client.deleteDocument, { docId: "gone", waitForReplicas: 0 })).toEqual({ found: true, chunksDeleted: 4 });
    expect(await call(t.client, t.client.deleteDocument, { docId: "gone", waitForReplicas: 0 })).toEqual({ found: false, chunksDeleted: 0 });
    const s = await statusOf(call(t.client, t.client.getChunks, { ranges: [{ docId: "gone", firstOrdinal: 0, lastOrdinal: 3 }] }));
    expect(s.code).toBe(status.NOT_FOUND);
    const hits = await call(t.client, t.client.search, searchRequest(markerOf("gone", 1), { mode: RetrievalMode.RETRIEVAL_MODE_BM25 }));
    expect(hits.chunks.filter((c) => c.chunk!.docId === "gone")).toEqual([]);
    const empty = await statusOf(call(t.client, t.client.deleteDocument, { docId: "", waitForReplicas: 0 }));
    expect(empty.code).toBe(status.INVALID_ARGUMENT);
  });

  it("EmbedTexts - the store's embedder on caller texts, in order; empty texts and oversized requests are INVALID_ARGUMENT", async () => {
    const res = await call(t.client, t.client.embedTexts, { texts: ["acetic acid", "sodium hydroxide", "acetic acid"] });
    expect(res.embedder).toBe("fake-hashed-bow-64");
    expect(res.embeddings.map((e) => e.values)).toEqual(["acetic acid", "sodium hydroxide", "acetic acid"].map((x) => Array.from(fakeEmbedVector(x))));
    expect((await call(t.client, t.client.embedTexts, { texts: [] })).embeddings).toEqual([]);
    const empty = await statusOf(call(t.client, t.client.embedTexts, { texts: ["fine", "  "] }));
    expect([empty.code, empty.details]).toEqual([status.INVALID_ARGUMENT, "texts[1] is empty; only non-empty texts can be embedded"]);
    const many = await statusOf(call(t.client, t.client.embedTexts, { texts: Array.from({ length: 4_097 }, (_, i) => `t${i}`) }));
    expect(many.code).toBe(status.INVALID_ARGUMENT);
    expect(many.details).toMatch(/4097 entries, more than the limit of 4096/);
    // The search can return the query's embedding too: the same vector.
    const hits = await call(t.client, t.client.search, { ...searchRequest("acetic acid"), includeQueryEmbedding: true });
    expect(hits.queryEmbedding!.values).toEqual(res.embeddings[0]!.values);
  });

  it("GetStats - reports counts, embedder, dimension, sizes and splitter", async () => {
    const res = await call(t.client, t.client.getStats, {});
    const s = t.store.stats();
    expect(res).toMatchObject({
      documents: s.documents,
      chunks: s.chunks,
      vectors: s.chunks,
      embedder: "fake-hashed-bow-64",
      dimension: 64,
      storePath: t.storeDir,
      splitter: "recursive max=300 overlap=0",
    });
    expect(res.documents).toBeGreaterThanOrEqual(3);
    expect(res.databaseBytes).toBeGreaterThan(0);
    expect(res.vectorIndexBytes).toBeGreaterThanOrEqual(0);
  });

  it("Errors - an unexpected failure is INTERNAL with a reference; the details go only to the log", async () => {
    t.embedder.failWith = new Error("tensor allocation failed in /opt/secret/model.bin");
    try {
      const s = await statusOf(call(t.client, t.client.search, searchRequest("acid")));
      expect(s.code).toBe(status.INTERNAL);
      expect(s.details).toMatch(/^internal error in Search \(ref ([0-9a-f]{8})\); the server log has the details$/);
      const ref = /ref ([0-9a-f]{8})/.exec(s.details)![1]!;
      expect(t.logs.find((l) => l.includes(ref))).toContain("/opt/secret/model.bin");
    } finally {
      t.embedder.failWith = undefined;
    }
  });
});
