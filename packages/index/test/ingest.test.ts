import { chunkDocument } from "@attr-rag/core";
import { describe, expect, it } from "vitest";
import { DocumentNotFoundError, EmbeddingError, InvalidDocumentError } from "../src/index.js";
import { fakeEmbed, fakeEmbedCalls, fakeEmbedVector } from "./helpers/fakeEmbedder.mjs";
import { rowCounts, storeViolations } from "./helpers/inspectStore.js";
import { makeDocument, markerOf, TEST_CHUNKER } from "./helpers/syntheticDocs.mjs";
import { tempStore } from "./helpers/tempStore.js";

describe("ingest", () => {
  it("ingest - a new document is chunked with core's chunker, stored whole and indexed", async () => {
    await using t = await tempStore();
    const doc = makeDocument("doc-a");
    const result = await t.store.upsertDocument(doc, fakeEmbed);

    const expected = chunkDocument(doc.id, doc.text, TEST_CHUNKER);
    expect(result).toEqual({ status: "indexed", chunkCount: expected.length });
    expect(expected.length).toBeGreaterThan(1);
    expect(t.store.getChunks(doc.id, 0, 100)).toEqual(expected);
    const stored = t.store.getDocument(doc.id)!;
    expect(stored).toMatchObject({ id: doc.id, title: doc.title, source: doc.source, license: doc.license, textLength: doc.text.length, chunkCount: expected.length });
    expect(stored.contentHash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(t.store.stats()).toMatchObject({ documents: 1, chunks: expected.length, vectors: expected.length, missingVectors: 0 });
  });

  it("re-ingest - unchanged text is a no-op: no embedding, no new rows, same rowids", async () => {
    await using t = await tempStore();
    const doc = makeDocument("doc-a");
    await t.store.upsertDocument(doc, fakeEmbed);
    const before = rowCounts(t.dir);
    const embedded = fakeEmbedCalls.texts;

    const again = await t.store.upsertDocument({ ...doc }, fakeEmbed);

    expect(again.status).toBe("unchanged");
    expect(fakeEmbedCalls.texts).toBe(embedded);
    expect(rowCounts(t.dir)).toEqual(before);
  });

  it("re-ingest - changed title or source with the same text rewrites only the document row", async () => {
    await using t = await tempStore();
    const doc = makeDocument("doc-a");
    await t.store.upsertDocument(doc, fakeEmbed);
    const before = rowCounts(t.dir);

    const result = await t.store.upsertDocument({ ...doc, title: "Renamed", source: "elsewhere" }, fakeEmbed);

    expect(result.status).toBe("updated");
    expect(rowCounts(t.dir)).toEqual(before);
    expect(t.store.getDocument(doc.id)).toMatchObject({ title: "Renamed", source: "elsewhere" });
    expect(t.store.searchBm25(markerOf("doc-a", 1), { k: 10, sources: ["elsewhere"] })).toHaveLength(result.chunkCount);
  });

  it("replace - changed text swaps every chunk; old text is gone from BM25 and dense results", async () => {
    await using t = await tempStore();
    const v1 = makeDocument("doc-a", 1);
    const v2 = makeDocument("doc-a", 2, 3);
    await t.store.upsertDocument(v1, fakeEmbed);
    await t.store.upsertDocument(makeDocument("doc-b"), fakeEmbed);
    const oldChunks = t.store.getChunks("doc-a", 0, 100);

    const result = await t.store.upsertDocument(v2, fakeEmbed);

    expect(result).toEqual({ status: "replaced", chunkCount: 3 });
    expect(t.store.getChunks("doc-a", 0, 100)).toEqual(chunkDocument("doc-a", v2.text, TEST_CHUNKER));
    expect(t.store.searchBm25(markerOf("doc-a", 1), { k: 10 })).toEqual([]);
    expect(t.store.searchBm25(markerOf("doc-a", 2), { k: 10 }).map((h) => h.docId)).toEqual(["doc-a", "doc-a", "doc-a"]);
    const oldTexts = new Set(oldChunks.map((c) => c.text));
    for (const old of oldChunks) {
      const hits = t.store.searchDense(fakeEmbedVector(old.text), { k: 20 });
      expect(hits.some((h) => oldTexts.has(h.text))).toBe(false);
    }
    expect(t.store.stats()).toMatchObject({ documents: 2, chunks: 3 + 4, vectors: 3 + 4 });
    await t.store.close();
    expect(storeViolations(t.dir)).toEqual([]);
  });

  it("replace - two concurrent upserts of the same new text store it once", async () => {
    await using t = await tempStore();
    const doc = makeDocument("doc-a");
    const results = await Promise.all([t.store.upsertDocument(doc, fakeEmbed), t.store.upsertDocument(doc, fakeEmbed)]);
    expect(results.map((r) => r.status).sort()).toEqual(["indexed", "unchanged"]);
    expect(t.store.stats()).toMatchObject({ documents: 1, chunks: 4, vectors: 4 });
  });

  it("delete - removes the document, its chunks, FTS rows and vectors", async () => {
    await using t = await tempStore();
    const a = makeDocument("doc-a");
    await t.store.upsertDocument(a, fakeEmbed);
    await t.store.upsertDocument(makeDocument("doc-b"), fakeEmbed);
    const aChunks = t.store.getChunks("doc-a", 0, 100);

    t.store.deleteDocument("doc-a");

    expect(t.store.getDocument("doc-a")).toBeUndefined();
    expect(() => t.store.getChunks("doc-a", 0, 0)).toThrow(DocumentNotFoundError);
    expect(t.store.searchBm25(markerOf("doc-a", 1), { k: 10 })).toEqual([]);
    const dense = t.store.searchDense(fakeEmbedVector(aChunks[0]!.text), { k: 50 });
    expect(dense.every((h) => h.docId === "doc-b")).toBe(true);
    expect(t.store.stats()).toMatchObject({ documents: 1, chunks: 4, vectors: 4 });
    await t.store.close();
    expect(storeViolations(t.dir)).toEqual([]);
  });

  it("delete - an absent document is DocumentNotFoundError and changes nothing", async () => {
    await using t = await tempStore();
    await t.store.upsertDocument(makeDocument("doc-a"), fakeEmbed);
    const before = rowCounts(t.dir);
    expect(() => t.store.deleteDocument("nope")).toThrow(DocumentNotFoundError);
    expect(() => t.store.deleteDocument("nope")).toThrow(/"nope" is not in the store/);
    expect(rowCounts(t.dir)).toEqual(before);
  });

  it("bad input - empty or whitespace-only text is InvalidDocumentError and the store is untouched", async () => {
    await using t = await tempStore();
    await t.store.upsertDocument(makeDocument("doc-a"), fakeEmbed);
    const before = rowCounts(t.dir);
    for (const text of ["", "   \n\t  "]) {
      await expect(t.store.upsertDocument({ id: "empty", text }, fakeEmbed)).rejects.toThrow(InvalidDocumentError);
    }
    await expect(t.store.upsertDocument({ id: "empty", text: "" }, fakeEmbed)).rejects.toThrow(/has no text.*nothing was stored/);
    // An empty replacement must not wipe the existing version either.
    await expect(t.store.upsertDocument({ id: "doc-a", text: " " }, fakeEmbed)).rejects.toThrow(InvalidDocumentError);
    expect(rowCounts(t.dir)).toEqual(before);
    expect(t.store.getDocument("doc-a")?.chunkCount).toBe(4);
  });

  it("bad input - missing id, non-string text or metadata are InvalidDocumentError", async () => {
    await using t = await tempStore();
    const bad: unknown[] = [{ id: "", text: "x" }, { id: "a", text: 42 }, { id: "a", text: "x", source: 7 }, null];
    for (const doc of bad) {
      await expect(t.store.upsertDocument(doc as never, fakeEmbed)).rejects.toThrow(InvalidDocumentError);
    }
    expect(t.store.stats().documents).toBe(0);
  });

  it("bad input - an embedder that fails or returns wrong vectors is EmbeddingError and nothing is stored", async () => {
    await using t = await tempStore();
    await t.store.upsertDocument(makeDocument("doc-a"), fakeEmbed);
    const before = rowCounts(t.dir);
    const v2 = makeDocument("doc-a", 2);
    const broken: [string, (texts: readonly string[]) => Promise<Float32Array[]>, RegExp][] = [
      ["throws", async () => Promise.reject(new Error("model crashed")), /failed on 4 texts: model crashed/],
      ["too few", async (texts) => texts.slice(1).map(fakeEmbedVector), /returned 3 vectors for 4 texts/],
      ["wrong length", async (texts) => texts.map(() => new Float32Array(32).fill(1)), /returned 32 dimensions.*expects 64/],
      ["NaN", async (texts) => texts.map(() => new Float32Array(64).fill(Number.NaN)), /non-finite/],
      ["zeros", async (texts) => texts.map(() => new Float32Array(64)), /all-zero/],
    ];
    for (const [, embed, message] of broken) {
      await expect(t.store.upsertDocument(v2, embed)).rejects.toThrow(EmbeddingError);
      await expect(t.store.upsertDocument(v2, embed)).rejects.toThrow(message);
    }
    expect(rowCounts(t.dir)).toEqual(before);
    expect(t.store.searchBm25(markerOf("doc-a", 1), { k: 10 })).toHaveLength(4);
  });
});
