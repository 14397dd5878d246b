import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreClosedError } from "../src/index.js";
import { fakeEmbed, fakeEmbedVector } from "./helpers/fakeEmbedder.mjs";
import { tempStore } from "./helpers/tempStore.js";
import { queries, rng, syntheticText } from "./helpers/zipfCorpus.js";

// BM25 on search threads: the same hits as on the caller's thread, the caller's event loop free while they
// run, committed documents visible at once, nothing left running after close.
describe("bm25 search threads", () => {
  let t: Awaited<ReturnType<typeof tempStore>>;
  beforeAll(async () => {
    t = await tempStore({ chunker: { maxChars: 400, overlapChars: 0 } });
    const rand = rng(21);
    for (let d = 0; d < 200; d++) {
      const text = Array.from({ length: 3 }, () => syntheticText(rand, 60)).join("\n\n");
      await t.store.upsertDocument({ id: `p${d}`, text, source: `s${d % 2}` }, fakeEmbed);
    }
    await t.store.useSearchThreads(2);
  });
  afterAll(async () => {
    await t?.[Symbol.asyncDispose]();
  });

  it("bm25 threads - BM25 and hybrid on the threads give the caller's-thread hits exactly", async () => {
    for (const q of queries(rng(23), 20)) {
      expect(await t.store.searchBm25Async(q, { k: 10 })).toEqual(t.store.searchBm25(q, { k: 10 }));
      expect(await t.store.searchBm25Async(q, { k: 5, sources: ["s1"], bm25Method: "exhaustive" })).toEqual(t.store.searchBm25(q, { k: 5, sources: ["s1"], bm25Method: "exhaustive" }));
      const v = fakeEmbedVector(q);
      expect(await t.store.searchHybridAsync(q, v, { k: 10 })).toEqual(t.store.searchHybrid(q, v, { k: 10 }));
    }
  });

  it("bm25 threads - the event loop keeps turning while searches run (on the caller's thread it would not turn once)", async () => {
    let turns = 0;
    let running = true;
    const spin = () => {
      turns++;
      if (running) setImmediate(spin);
    };
    const asks = queries(rng(29), 40).map((q) => t.store.searchBm25Async(q, { k: 30, bm25Method: "exhaustive" }));
    setImmediate(spin);
    const hits = await Promise.all(asks);
    running = false;
    expect(hits.every((h) => h.length > 0)).toBe(true);
    expect(turns).toBeGreaterThan(1);
  });

  it("bm25 threads - a document committed by the writer is found by the next threaded search", async () => {
    await t.store.upsertDocument({ id: "fresh", text: "Quokkazine crystallises from hot ethanol." }, fakeEmbed);
    const hits = await t.store.searchBm25Async("quokkazine", { k: 3 });
    expect(hits.map((h) => h.docId)).toEqual(["fresh"]);
    t.store.deleteDocument("fresh");
    expect(await t.store.searchBm25Async("quokkazine", { k: 3 })).toEqual([]);
  });

  it("bm25 threads - bad input is refused before it reaches a thread; a closed store refuses searches", async () => {
    await expect(t.store.searchBm25Async("q", { k: 0 })).rejects.toThrow(/k/);
    await expect(t.store.searchBm25Async("q", { k: 3, bm25Method: "fast" as never })).rejects.toThrow(/bm25Method must be "topk" or "exhaustive"/);
    await t.store.close();
    await expect(t.store.searchBm25Async("q", { k: 3 })).rejects.toBeInstanceOf(StoreClosedError);
  });
});
