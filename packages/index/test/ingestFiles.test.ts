import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChunkStore } from "../src/ChunkStore.js";
import { UseLiteEmbedder } from "../src/embedders/UseLiteEmbedder.js";
import { readDocuments } from "../src/ingest/readers/readDocuments.js";
import { minimalPdf } from "./helpers/minimalPdf.js";

let dir: string;
let embedder: UseLiteEmbedder;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "attr-rag-ingest-files-"));
  embedder = new UseLiteEmbedder();
});
afterAll(async () => {
  await embedder.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe("files → store with USE-lite", () => {
  it("ingest files - a folder of md, txt, pdf and jsonl is searchable densely and by BM25", async () => {
    const docs = join(dir, "docs");
    mkdirSync(docs);
    writeFileSync(join(docs, "reflux.md"), "# Heating under reflux\n\nFit a condenser to the round-bottom flask and heat the mixture to a gentle boil.");
    writeFileSync(join(docs, "weighing.txt"), "Tare the balance, then weigh the solid on weighing paper to the nearest milligram.");
    writeFileSync(join(docs, "titration.pdf"), minimalPdf(["Fill the burette with sodium hydroxide solution", "and titrate the acid to the phenolphthalein end point."]));
    writeFileSync(join(docs, "corpus.jsonl"), `${JSON.stringify({ id: "market", title: "Markets", text: "Stock prices fell sharply on Monday as investors sold shares." })}\n`);
    const store = await ChunkStore.open(join(dir, "store"), {
      create: true,
      embedder: { id: embedder.id, dimensions: embedder.dimensions },
      embed: (t) => embedder.embed(t),
    });
    try {
      const statuses: string[] = [];
      for await (const { document } of readDocuments([docs])) statuses.push((await store.upsertDocument(document, (t) => embedder.embed(t))).status);
      expect(statuses).toEqual(["indexed", "indexed", "indexed", "indexed"]);
      expect(store.getDocument("reflux.md")?.title).toBe("Heating under reflux");
      const [q] = await embedder.embed(["How do I titrate an acid with a base using a burette?"]);
      expect(store.searchDense(q!, { k: 1 })[0]!.docId).toBe("titration.pdf");
      expect(store.searchHybrid("burette titrate", q!, { k: 1 })[0]!.docId).toBe("titration.pdf");
      expect(store.searchBm25("milligram balance", { k: 1 })[0]!.docId).toBe("weighing.txt");
      expect(store.stats()).toMatchObject({ documents: 4, missingVectors: 0 });
    } finally {
      await store.close();
    }
  });
});
