import { describe, expect, it } from "vitest";
import { EmbeddingError, InvalidDocumentError } from "../src/index.js";
import { VectorIndex } from "../src/vectors/VectorIndex.js";
import { fakeEmbed, fakeEmbedVector } from "./helpers/fakeEmbedder.mjs";
import { rowCounts, storeViolations } from "./helpers/inspectStore.js";
import { makeDocument, markerOf, rng } from "./helpers/syntheticDocs.mjs";
import { tempDir, tempStore } from "./helpers/tempStore.js";

/** Ten documents, then a second round that replaces, keeps, renames and repeats some of them. */
function rounds() {
  const first = Array.from({ length: 10 }, (_, i) => makeDocument(`doc-${i}`));
  const second = [
    makeDocument("doc-1", 2), // replaced
    { ...makeDocument("doc-2"), title: "Renamed" }, // updated
    makeDocument("doc-3"), // unchanged
    makeDocument("doc-10"), // new
    makeDocument("doc-1", 3), // the same id again in one call: replaces the version two places up
    makeDocument("doc-11"),
  ];
  return [first, second];
}

describe("upsertDocuments", () => {
  it("a batch stores exactly what the same documents one at a time store: results, rows, term counts, rankings", async () => {
    await using one = await tempStore();
    await using many = await tempStore();
    const singles = [];
    const batches = [];
    for (const round of rounds()) {
      for (const doc of round) singles.push(await one.store.upsertDocument(doc, fakeEmbed));
      batches.push(...(await many.store.upsertDocuments(round, fakeEmbed)));
    }

    expect(batches).toEqual(singles);
    expect(batches.slice(10).map((r) => r.status)).toEqual(["replaced", "updated", "unchanged", "indexed", "replaced", "indexed"]);
    expect(rowCounts(many.dir)).toEqual(rowCounts(one.dir));
    expect(storeViolations(many.dir)).toEqual([]);
    expect(many.store.getChunks("doc-1", 0, 99)).toEqual(one.store.getChunks("doc-1", 0, 99));
    expect(many.store.getDocument("doc-2")?.title).toBe("Renamed");
    for (const query of [markerOf("doc-1", 3), markerOf("doc-1", 1), "paragraph of doc-11", markerOf("doc-7", 1)]) {
      expect(many.store.searchBm25(query, { k: 10 })).toEqual(one.store.searchBm25(query, { k: 10 }));
      expect(many.store.searchDense(fakeEmbedVector(query), { k: 10 })).toEqual(one.store.searchDense(fakeEmbedVector(query), { k: 10 }));
    }
    // Only the last version of doc-1 is found: its marker finds it, the replaced versions' markers do not.
    const doc1 = (version: number) => many.store.searchBm25(markerOf("doc-1", version), { k: 10 }).filter((h) => h.docId === "doc-1");
    expect(doc1(3).length).toBeGreaterThan(0);
    expect([...doc1(1), ...doc1(2)]).toEqual([]);
    expect(many.store.stats()).toMatchObject({ missingVectors: 0 });
  });

  it("an embedding failure or an invalid document stores none of the batch", async () => {
    // Two texts per embed call, so the failure comes after part of the batch was embedded.
    await using t = await tempStore({ embedBatchSize: 2 });
    await t.store.upsertDocument(makeDocument("kept"), fakeEmbed);
    const before = rowCounts(t.dir);
    const docs = [makeDocument("a"), makeDocument("b"), makeDocument("kept", 2)];
    let calls = 0;
    const failing = async (texts: readonly string[]) => {
      if (++calls === 2) throw new Error("the GPU fell over");
      return fakeEmbed(texts);
    };

    await expect(t.store.upsertDocuments(docs, failing)).rejects.toThrow(EmbeddingError);
    await expect(t.store.upsertDocuments([makeDocument("c"), { id: "", text: "x" }], fakeEmbed)).rejects.toThrow(InvalidDocumentError);
    await expect(t.store.upsertDocuments("doc" as never, fakeEmbed)).rejects.toThrow(/expected an array/);

    expect(rowCounts(t.dir)).toEqual(before);
    expect(t.store.getDocument("kept")?.chunkCount).toBe(before.chunks);
    expect(storeViolations(t.dir)).toEqual([]);
  });

  it("the vector index grows past the parallel-insert size, through a save and a load, and finds every vector", () => {
    using dir = tempDir();
    const config = { dimensions: 16, quantization: "f32" as const, hnsw: { connectivity: 16, expansionAdd: 128, expansionSearch: 64 } };
    const random = rng(7);
    const vector = () => Float32Array.from({ length: 16 }, () => random() - 0.5);
    const vectors = new Map<number, Float32Array>();
    const addBatch = (index: VectorIndex, from: number, n: number) => {
      const keys = Array.from({ length: n }, (_, i) => from + i);
      const batch = keys.map(() => vector());
      keys.forEach((k, i) => vectors.set(k, batch[i]!));
      index.add(keys, batch);
    };
    // 10,240 one small batch at a time (one thread), then batches of 256 (two threads where there are two).
    let index = VectorIndex.empty(config);
    for (let from = 1; from <= 10_240; from += 40) addBatch(index, from, 40);
    for (let from = 10_241; from <= 12_800; from += 256) addBatch(index, from, 256);
    index.save(`${dir.path}/v.usearch`);
    index = VectorIndex.load(`${dir.path}/v.usearch`, config);
    for (let from = 12_801; from <= 14_080; from += 256) addBatch(index, from, 256);

    expect(index.size).toBe(14_080);
    expect(index.contains([...vectors.keys()]).every(Boolean)).toBe(true);
    let found = 0;
    for (const [key, v] of vectors) if (index.search(v, 1)[0]?.key === key) found++;
    expect(found / vectors.size).toBeGreaterThan(0.99);
  });
});
