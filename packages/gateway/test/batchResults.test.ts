import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { AskRequest, BATCH_RESULTS_STREAM, BatchItemResult, BatchItemState, BatchState, batchResultSubject } from "@attr-rag/contracts";
import { connectNats, ConnectionWatch, natsServerMissing, startNatsServer, type NatsConnection, type NatsServer } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BATCH_QUEUE, ensureBatchStreams } from "../src/batch/jetstream/batchStreams.js";
import { publishResult } from "../src/batch/jetstream/JetStreamBatchQueue.js";
import { JetStreamBatchStore } from "../src/batch/jetstream/JetStreamBatchStore.js";
import { prepareBatch } from "../src/index.js";
import { until } from "./helpers/until.js";

const missing = natsServerMissing();

const result = (index: number, answer: string) =>
  BatchItemResult.fromPartial({ batchId: "dup", itemId: `dup-${index}`, index, state: BatchItemState.BATCH_ITEM_STATE_SUCCEEDED, finalAnswer: { text: answer }, attempts: 1, finishedUnixMs: Date.now() });

describe.skipIf(missing !== undefined)(`batches in JetStream (real nats-server)${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: NatsServer;
  let nc: NatsConnection;

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connectNats({ url: server.url, name: "results-test" });
    await ensureBatchStreams(nc, await jetstreamManager(nc), DEFAULT_BATCH_QUEUE);
  });

  afterAll(async () => {
    await nc?.close();
    await server?.stop();
  });

  it("batch results - an item records one result: a repeat publish (a duplicate by message id, or a later runner's) says it had one, so no count goes up twice", async () => {
    const js = jetstream(nc);
    expect(await publishResult(js, result(0, "first"))).toBe(true);
    // The same message id within the duplicate window: JetStream acks it as a duplicate before the sequence check.
    expect(await publishResult(js, result(0, "first"))).toBe(false);
    // Another runner's result for the same item, after the window or with other content: refused by sequence.
    expect(await publishResult(js, result(0, "second"))).toBe(false);
    expect(await publishResult(js, result(1, "other item"))).toBe(true);
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(BATCH_RESULTS_STREAM, { subjects_filter: batchResultSubject("dup", 0) });
    expect(Object.values(info.state.subjects ?? {})).toEqual([1]);
    const stored = await jsm.streams.getMessage(BATCH_RESULTS_STREAM, { last_by_subj: batchResultSubject("dup", 0) });
    expect(BatchItemResult.decode(stored!.data).finalAnswer?.text).toBe("first");
  });

  it("batches distributed - CancelBatch of a batch queued behind a 1,000-item batch ends every one of its items within 10 s, not when runners reach them", async () => {
    const signal = new AbortController().signal;
    const store = await JetStreamBatchStore.open(nc, new ConnectionWatch(nc), { log: () => {} });
    try {
      const items = (id: string, n: number) => Array.from({ length: n }, (_, i) => ({ itemId: `${id}-${i}`, request: AskRequest.fromPartial({ question: `question ${i} of ${id}` }) }));
      await store.create(prepareBatch({ batchId: "ahead", items: items("ahead", 1000), label: "" }, { maxBatchItems: 10_000 }));
      await store.create(prepareBatch({ batchId: "behind", items: items("behind", 20), label: "" }, { maxBatchItems: 10_000 }));
      // No runner is running: before, the 20 stayed queued behind the 1,000 and the batch stayed CANCELLING.
      await store.cancel("behind");
      const ended = await until(async () => {
        const b = await store.get("behind");
        return b.state === BatchState.BATCH_STATE_CANCELLED ? b : undefined;
      }, "the cancelled batch to end", 10_000);
      expect(ended.counts).toEqual({ queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 20 });
      const results: BatchItemResult[] = [];
      for await (const r of store.results("behind", 0, false, signal)) results.push(r);
      expect(results.map((r) => r.itemId).sort()).toEqual(items("behind", 20).map((i) => i.itemId).sort());
      expect(results.every((r) => r.state === BatchItemState.BATCH_ITEM_STATE_CANCELLED && /before this item started/.test(r.statusMessage))).toBe(true);
      expect((await store.get("ahead")).counts).toMatchObject({ queued: 1000, cancelled: 0 });
      // Cancelling again changes nothing.
      expect((await store.cancel("behind")).counts).toEqual(ended.counts);
    } finally {
      await store.close();
    }
  });
});
