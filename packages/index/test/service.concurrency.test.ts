import { IngestStatus, RetrievalMode, type SearchResponse } from "@attr-rag/contracts";
import { describe, expect, it } from "vitest";
import { makeDocument, markerOf } from "./helpers/syntheticDocs.mjs";
import { call, ingest, startTestServer } from "./helpers/serviceHarness.js";

const MODES = [RetrievalMode.RETRIEVAL_MODE_BM25, RetrievalMode.RETRIEVAL_MODE_HYBRID];

describe("IndexService under load", () => {
  it("100 concurrent searches while a 400-document ingest runs: none fails, each sees committed documents only", async () => {
    await using t = await startTestServer();
    await t.store.useSearchThreads(2);
    const seeds = Array.from({ length: 20 }, (_, i) => makeDocument(`seed${i}`));
    expect((await ingest(t.client, seeds)).indexed).toBe(20);

    const incoming = Array.from({ length: 400 }, (_, i) => makeDocument(`c${i}`));
    let ingesting = true;
    const ingested = ingest(t.client, incoming).finally(() => (ingesting = false));
    const errors: unknown[] = [];
    const wrong: string[] = [];
    let searches = 0;
    let sawIngested = 0;
    await Promise.all(
      Array.from({ length: 100 }, async (_, client) => {
        for (let n = 0; ingesting || n < 2; n++) {
          const seed = (client + n) % seeds.length;
          const mode = MODES[(client + n) % MODES.length]!;
          try {
            const res: SearchResponse = await call(t.client, t.client.search, { query: markerOf(`seed${seed}`, 1), options: { k: 10, mode }, includeQueryEmbedding: false });
            searches++;
            const docs = new Set(res.chunks.map((c) => c.chunk!.docId));
            // A seed's marker finds that seed, whatever is being written beside it.
            if (!docs.has(`seed${seed}`)) wrong.push(`${mode}: seed${seed} not found, got ${[...docs].join(",")}`);
            // Any ingested document a search sees is whole in the store already: committed, never half-written.
            for (const id of docs) {
              if (!id.startsWith("c")) continue;
              sawIngested++;
              const stored = t.store.getDocument(id);
              if (stored === undefined || t.store.getChunks(id, 0, 99).length !== stored.chunkCount) wrong.push(`${id} seen before it was committed`);
            }
          } catch (err) {
            errors.push(err);
          }
        }
      }),
    );
    const response = await ingested;

    expect(errors).toEqual([]);
    expect(wrong).toEqual([]);
    expect(searches).toBeGreaterThanOrEqual(200);
    expect(response.indexed).toBe(400);
    expect(response.results.every((r) => r.status === IngestStatus.INGEST_STATUS_INDEXED)).toBe(true);
    // Hybrid's dense half returns near neighbours, ingested documents among them once they are committed.
    expect(sawIngested).toBeGreaterThan(0);
    for (const i of [0, 199, 399]) {
      const res: SearchResponse = await call(t.client, t.client.search, { query: markerOf(`c${i}`, 1), options: { k: 10, mode: RetrievalMode.RETRIEVAL_MODE_BM25 }, includeQueryEmbedding: false });
      expect(res.chunks.map((c) => c.chunk!.docId)).toContain(`c${i}`);
    }
    expect(t.logs).toEqual([]);
  });
});
