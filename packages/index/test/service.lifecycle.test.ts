import { Metadata, status } from "@grpc/grpc-js";
import { IngestStatus, RetrievalMode } from "@attr-rag/contracts";
import { describe, expect, it } from "vitest";
import {
  ChunkStore,
  createIndexServiceImplementation,
  DocumentNotFoundError,
  EmbedderMismatchError,
  EmbeddingError,
  InvalidDocumentError,
  InvalidQueryError,
  ServiceError,
  StoreClosedError,
  StoreNotFoundError,
  toGrpcStatus,
  VectorsIncompleteError,
} from "../src/index.js";
import { FAKE_EMBEDDER } from "./helpers/fakeEmbedder.mjs";
import { call, ingest, startTestServer, statusOf } from "./helpers/serviceHarness.js";
import { makeDocument } from "./helpers/syntheticDocs.mjs";
import { tempStore } from "./helpers/tempStore.js";

const DENSE = { mode: RetrievalMode.RETRIEVAL_MODE_DENSE };

describe("IndexService lifecycle and limits", () => {
  it("Deadlines - a search past its deadline is DEADLINE_EXCEEDED, the embedding is aborted, the server keeps serving", async () => {
    await using t = await startTestServer();
    await ingest(t.client, [makeDocument("a")]);
    t.embedder.delayMs = 2_000;
    const started = Date.now();
    const s = await statusOf(call(t.client, t.client.search, { query: "acid", options: DENSE, includeQueryEmbedding: false }, { deadline: Date.now() + 50 }));
    expect(s.code).toBe(status.DEADLINE_EXCEEDED);
    expect(Date.now() - started).toBeLessThan(1_500);
    await expect.poll(() => t.embedder.aborted).toBe(1);
    t.embedder.delayMs = 0;
    const after = await call(t.client, t.client.search, { query: "acid", options: { ...DENSE, k: 2 }, includeQueryEmbedding: false });
    expect(after.chunks).toHaveLength(2);
    expect(t.logs).toEqual([]);
  });

  it("Deadlines - an ingest stream past its deadline stops between groups of documents and leaves the store consistent", async () => {
    await using t = await startTestServer();
    // The first document is a group of its own (done at 250 ms); the next group, the 32 that arrived meanwhile
    // (128 chunks, two embed calls), would end at 750 ms: the deadline falls inside it.
    t.embedder.delayMs = 250;
    const docs = Array.from({ length: 40 }, (_, i) => makeDocument(`d${i}`));
    const s = await statusOf(ingest(t.client, docs, { deadline: Date.now() + 600 }));
    expect(s.code).toBe(status.DEADLINE_EXCEEDED);
    await expect.poll(() => t.embedder.aborted).toBe(1);
    t.embedder.delayMs = 0;
    const stats = await call(t.client, t.client.getStats, {});
    expect(stats.documents).toBeGreaterThanOrEqual(1);
    expect(stats.documents).toBeLessThan(docs.length);
    expect(stats.chunks).toBe(stats.documents * 4);
    expect(stats.vectors).toBe(stats.chunks);
    expect(t.logs).toEqual([]);
  });

  it("Cancellation - a search the client cancels stops its embedding", async () => {
    await using t = await startTestServer();
    t.embedder.delayMs = 2_000;
    const s = await statusOf(
      new Promise((resolve, reject) => {
        const c = t.client.search({ query: "acid", options: DENSE, includeQueryEmbedding: false }, new Metadata(), {}, (err, res) => (err ? reject(err) : resolve(res)));
        setTimeout(() => c.cancel(), 50);
      }),
    );
    expect(s.code).toBe(status.CANCELLED);
    await expect.poll(() => t.embedder.aborted).toBe(1);
    expect(t.logs).toEqual([]);
  });

  it("Limits - a stream with more documents than allowed is RESOURCE_EXHAUSTED after the allowed ones", async () => {
    await using t = await startTestServer({ maxDocumentsPerStream: 3 });
    const s = await statusOf(ingest(t.client, ["l0", "l1", "l2", "l3", "l4"].map((id) => makeDocument(id))));
    expect(s.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(s.details).toMatch(/more than 3 documents, the limit per IngestDocuments call; the first 3 were processed/);
    const ok = await ingest(t.client, [makeDocument("l3")]);
    expect(ok.results[0]!.status).toBe(IngestStatus.INGEST_STATUS_INDEXED);
  });

  it("Limits - GetChunks over its response limit is RESOURCE_EXHAUSTED, k over a lowered maxK INVALID_ARGUMENT", async () => {
    await using t = await startTestServer({ maxChunksPerResponse: 5, maxK: 3, defaultK: 3 });
    await ingest(t.client, [makeDocument("a"), makeDocument("b")]);
    const s = await statusOf(call(t.client, t.client.getChunks, { ranges: [{ docId: "a", firstOrdinal: 0, lastOrdinal: 3 }, { docId: "b", firstOrdinal: 0, lastOrdinal: 3 }] }));
    expect(s.code).toBe(status.RESOURCE_EXHAUSTED);
    const k = await statusOf(call(t.client, t.client.search, { query: "acid", options: { ...DENSE, k: 4 }, includeQueryEmbedding: false }));
    expect(k.code).toBe(status.INVALID_ARGUMENT);
    expect(k.details).toMatch(/from 1 to 3/);
  });

  it("Lifecycle - close() closes the store, repeat-safe; the store reopens with everything acknowledged", async () => {
    await using t = await startTestServer();
    await ingest(t.client, [makeDocument("a"), makeDocument("b")]);
    await Promise.all([t.handle.close(), t.handle.close()]);
    expect(() => t.store.stats()).toThrow(StoreClosedError);
    const s = await statusOf(call(t.client, t.client.getStats, {}, { deadline: Date.now() + 2_000 }));
    expect(s.code).toBe(status.UNAVAILABLE);
    await using reopened = await ChunkStore.open(t.storeDir);
    expect(reopened.stats()).toMatchObject({ documents: 2, chunks: 8, vectors: 8, missingVectors: 0 });
  });

  it("Lifecycle - a store closed under a running server answers UNAVAILABLE", async () => {
    await using t = await startTestServer();
    await t.store.close();
    const s = await statusOf(call(t.client, t.client.getStats, {}));
    expect(s.code).toBe(status.UNAVAILABLE);
    expect(s.details).toMatch(/the store is closed/);
    const r = await statusOf(ingest(t.client, [makeDocument("a")]));
    expect(r.code).toBe(status.UNAVAILABLE);
  });

  it("Lifecycle - the service refuses an embedder that is not the store's", async () => {
    await using t = await tempStore();
    const other = { id: "other-embedder", dimensions: FAKE_EMBEDDER.dimensions, embed: async () => [] };
    expect(() => createIndexServiceImplementation(t.store, other)).toThrow(EmbedderMismatchError);
  });

  it("toGrpcStatus - maps each error kind to its code and hides unexpected ones", () => {
    const logs: string[] = [];
    const log = (l: string) => logs.push(l);
    const closed = new StoreClosedError("search");
    const cases: [unknown, status][] = [
      [new InvalidQueryError("bad k"), status.INVALID_ARGUMENT],
      [new InvalidDocumentError("no text"), status.INVALID_ARGUMENT],
      [new DocumentNotFoundError("x", "getChunks"), status.NOT_FOUND],
      [new StoreNotFoundError("no store"), status.NOT_FOUND],
      [new EmbedderMismatchError(FAKE_EMBEDDER, { id: "y", dimensions: 3 }, "/s"), status.FAILED_PRECONDITION],
      [new VectorsIncompleteError("missing"), status.FAILED_PRECONDITION],
      [closed, status.UNAVAILABLE],
      [new ServiceError(status.RESOURCE_EXHAUSTED, "too many"), status.RESOURCE_EXHAUSTED],
      [new DOMException("stop", "AbortError"), status.CANCELLED],
      [new DOMException("late", "TimeoutError"), status.DEADLINE_EXCEEDED],
    ];
    for (const [err, code] of cases) expect(toGrpcStatus(err, "Test", log)).toEqual({ code, details: (err as Error).message });
    expect(logs).toEqual([]);
    const internal = toGrpcStatus(new EmbeddingError("worker crashed", { cause: new Error("at /secret/path") }), "Test", log);
    expect(internal.code).toBe(status.INTERNAL);
    expect(internal.details).not.toMatch(/worker|secret/);
    expect(logs[0]).toMatch(/worker crashed[\s\S]*caused by: Error: at \/secret\/path/);
    expect(toGrpcStatus("a string", "Test", log).code).toBe(status.INTERNAL);
  });

  it("Server - binds 127.0.0.1 on a free port and reports host:port", async () => {
    await using t = await startTestServer();
    expect(t.handle.host).toBe("127.0.0.1");
    expect(t.handle.port).toBeGreaterThan(0);
    expect(t.handle.address).toBe(`127.0.0.1:${t.handle.port}`);
  });
});
