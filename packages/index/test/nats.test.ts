import { status } from "@grpc/grpc-js";
import { IngestStatus, RetrievalMode, type SearchRequest } from "@attr-rag/contracts";
import { connectNats, ConnectionWatch, natsServerMissing, startNatsServer } from "@attr-rag/nats";
import { describe, expect, it } from "vitest";
import { LocalIndex, NatsIndex, serveIndexOverNats, ServiceError } from "../src/index.js";
import { TestEmbedder } from "./helpers/serviceHarness.js";
import { markerOf, makeDocument } from "./helpers/syntheticDocs.mjs";
import { tempStore } from "./helpers/tempStore.js";

const signal = new AbortController().signal;

async function statusOf(p: Promise<unknown>): Promise<ServiceError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ServiceError)) throw new Error(`expected a ServiceError, got ${String(err)}`);
  return err;
}

const missing = natsServerMissing();

describe.skipIf(missing !== undefined)(`index over NATS${missing ? ` (skipped: ${missing})` : ""}`, () => {
  it("index nats - every endpoint answers exactly what the in-process index answers, errors included", async () => {
    await using server = await startNatsServer();
    await using t = await tempStore();
    const embedder = new TestEmbedder();
    const local = new LocalIndex(t.store, embedder);
    for (const id of ["a", "b"]) await t.store.upsertDocument(makeDocument(id), (texts) => embedder.embed(texts));
    const serviceConn = await connectNats({ url: server.url, name: "index" });
    const clientConn = await connectNats({ url: server.url, name: "gateway" });
    const remote = new NatsIndex(clientConn, new ConnectionWatch(clientConn));
    const service = await serveIndexOverNats(serviceConn, local.context);
    try {
      const request: SearchRequest = { query: markerOf("a", 1), options: { k: 3, mode: RetrievalMode.RETRIEVAL_MODE_HYBRID }, includeQueryEmbedding: true };
      const viaNats = await remote.search(request, signal);
      expect(viaNats).toEqual(await local.search(request, signal));
      expect(viaNats.chunks[0]!.chunk!.docId).toBe("a");
      expect(viaNats.queryEmbedding!.values).toHaveLength(64);

      const ranges = { ranges: [{ docId: "b", firstOrdinal: 1, lastOrdinal: 2 }] };
      expect(await remote.getChunks(ranges, signal)).toEqual(await local.getChunks(ranges));
      expect((await remote.getStats(signal)).chunks).toBe(t.store.stats().chunks);
      expect(await remote.embedTexts({ texts: ["acid", "base"] }, signal)).toEqual(await local.embedTexts({ texts: ["acid", "base"] }, signal));

      const ingested = await remote.ingest({ document: { ...makeDocument("c"), metadata: {} }, waitForReplicas: 0 }, signal);
      expect(ingested.results.map((r) => r.status)).toEqual([IngestStatus.INGEST_STATUS_INDEXED]);
      expect(t.store.getDocument("c")).toBeDefined();
      expect((await remote.deleteDocument({ docId: "c", waitForReplicas: 0 }, signal)).found).toBe(true);

      // Failures keep their gRPC status and message across NATS.
      const missing = await statusOf(remote.getChunks({ ranges: [{ docId: "nope", firstOrdinal: 0, lastOrdinal: 0 }] }, signal));
      const missingLocal = await statusOf(local.getChunks({ ranges: [{ docId: "nope", firstOrdinal: 0, lastOrdinal: 0 }] }));
      expect([missing.code, missing.message]).toEqual([missingLocal.code, missingLocal.message]);
      expect(missing.code).toBe(status.NOT_FOUND);
      const badK = await statusOf(remote.search({ ...request, options: { k: 0, mode: RetrievalMode.RETRIEVAL_MODE_BM25 } }, signal));
      expect(badK.code).toBe(status.INVALID_ARGUMENT);
      expect(badK.message).toMatch(/options\.k must be from 1/);
    } finally {
      await service.stop();
      await serviceConn.close();
    }
    // Nobody serves the index any more: a clear UNAVAILABLE naming the command to start.
    const gone = await statusOf(remote.getStats(signal));
    expect(gone.code).toBe(status.UNAVAILABLE);
    expect(gone.message).toMatch(/the index is not running on NATS .*attr-rag index serve --store DIR --nats URL/);
    await clientConn.close();
  });
});
