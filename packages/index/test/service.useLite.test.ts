import { join } from "node:path";
import { credentials } from "@grpc/grpc-js";
import { IndexServiceClient, IngestStatus, RetrievalMode } from "@attr-rag/contracts";
import { describe, expect, it } from "vitest";
import { ChunkStore, startIndexServer, UseLiteEmbedder } from "../src/index.js";
import { call, ingest } from "./helpers/serviceHarness.js";
import { tempDir } from "./helpers/tempStore.js";

describe("IndexService with USE-lite", () => {
  it("Search - dense retrieval over a USE-lite store served on 127.0.0.1:0 finds the matching procedure", async () => {
    using dir = tempDir("attr-rag-service-use-");
    await using embedder = new UseLiteEmbedder();
    const store = await ChunkStore.open(join(dir.path, "store"), { create: true, embedder, embed: (t) => embedder.embed(t) });
    await using server = await startIndexServer({ store, embedder });
    const client = new IndexServiceClient(server.address, credentials.createInsecure());
    try {
      const res = await ingest(client, [
        { id: "aspirin", title: "Aspirin", text: "Salicylic acid is acetylated with acetic anhydride to give aspirin, which is recrystallised from ethanol." },
        { id: "titration", title: "Titration", text: "Fill the burette with sodium hydroxide solution and titrate the acid until the indicator turns pink." },
      ]);
      expect(res.results.map((r) => r.status)).toEqual([IngestStatus.INGEST_STATUS_INDEXED, IngestStatus.INGEST_STATUS_INDEXED]);
      const query = "How do I make aspirin?";
      const hits = await call(client, client.search, { query, options: { k: 2, mode: RetrievalMode.RETRIEVAL_MODE_DENSE }, includeQueryEmbedding: true });
      expect(hits.embedder).toBe(embedder.id);
      expect(hits.chunks[0]!.chunk!.docId).toBe("aspirin");
      // The query's embedding comes back when asked for, and EmbedTexts gives the same vectors.
      expect(hits.queryEmbedding!.values).toHaveLength(512);
      const embedded = await call(client, client.embedTexts, { texts: [query, "Titrate the acid."] });
      expect(embedded.embedder).toBe(embedder.id);
      expect(embedded.embeddings.map((e) => e.values.length)).toEqual([512, 512]);
      expect(embedded.embeddings[0]!.values).toEqual(hits.queryEmbedding!.values);
      const norm = Math.hypot(...embedded.embeddings[1]!.values);
      expect(norm).toBeCloseTo(1, 5);
    } finally {
      client.close();
    }
  });
});
