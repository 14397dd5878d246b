import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { AskRequest, BatchItemJob, BATCH_ITEMS_STREAM, BATCH_RESULTS_STREAM, BATCH_RUNNERS_CONSUMER, BatchItemResult, BatchItemState, BatchState, batchResultSubject } from "@attr-rag/contracts";
import { connectNats, ConnectionWatch, natsServerMissing, startNatsServer, type NatsConnection, type NatsServer } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BATCH_QUEUE, ensureBatchStreams } from "../src/jetstream/batchStreams.js";
import { publishResult } from "../src/jetstream/JetStreamBatchQueue.js";
import { JetStreamBatchStore } from "../src/jetstream/JetStreamBatchStore.js";
import { prepareBatch } from "../src/index.js";
import { newestFirst } from "../src/pageToken.js";
import { until } from "../../gateway/test/helpers/until.js";

const missing = natsServerMissing();

const result = (index: number, answer: string) =>
  BatchItemResult.fromPartial({ batchId: "dup", itemId: `dup-${index}`, index, state: BatchItemState.BATCH_ITEM_STATE_SUCCEEDED, finalAnswer: { text: answer }, attempts: 1, finishedUnixMs: Date.now() });

describe.skipIf(missing !== undefined)(`batches in JetStream (real nats-server)${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: NatsServer;
  let nc: NatsConnection;
  let kv: KV;

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connectNats({ url: server.url, name: "results-test" });
    kv = await ensureBatchStreams(nc, await jetstreamManager(nc), DEFAULT_BATCH_QUEUE);
  });

  afterAll(async () => {
    await nc?.close();
    await server?.stop();
  });

  it("batch results - an item records one result: a repeat publish (a duplicate by message id, or a later runner's) says it had one, so no count goes up twice", async () => {
    const js = jetstream(nc);
    expect(await publishResult(js, result(0, "first"), 7)).toBe(true);
    // The same message id within the duplicate window: JetStream acks it as a duplicate before the sequence check.
    expect(await publishResult(js, result(0, "first"), 7)).toBe(false);
    // Another runner's result for the same item (from a second message of it: a CreateBatch re-sent after the items'
    // de-duplication window): refused by the expected sequence.
    expect(await publishResult(js, result(0, "second"), 9)).toBe(false);
    expect(await publishResult(js, result(1, "other item"), 8)).toBe(true);
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(BATCH_RESULTS_STREAM, { subjects_filter: batchResultSubject("dup", 0) });
    expect(Object.values(info.state.subjects ?? {})).toEqual([1]);
    const stored = await jsm.streams.getMessage(BATCH_RESULTS_STREAM, { last_by_subj: batchResultSubject("dup", 0) });
    expect(BatchItemResult.decode(stored!.data).finalAnswer?.text).toBe("first");
  });

  it("batches distributed - results outlive their records: the results stream keeps them twice the bucket's TTL, and one made with the records' age is lengthened at start", async () => {
    const jsm = await jetstreamManager(nc);
    const ttl = (await kv.status()).ttl;
    expect(ttl).toBe(DEFAULT_BATCH_QUEUE.retentionMs);
    const maxAgeMs = async () => (await jsm.streams.info(BATCH_RESULTS_STREAM)).config.max_age / 1e6;
    expect(await maxAgeMs()).toBe(2 * ttl);
    // A stream left by a release that kept results only as long as records.
    await jsm.streams.update(BATCH_RESULTS_STREAM, { max_age: ttl * 1e6 });
    expect(await maxAgeMs()).toBe(ttl);
    await ensureBatchStreams(nc, jsm, DEFAULT_BATCH_QUEUE);
    expect(await maxAgeMs()).toBe(2 * ttl);
  });

  it("batches distributed - a batch id used again after its record expired: the earlier batch's results and queued items are not the new batch's", async () => {
    const signal = new AbortController().signal;
    const lines: string[] = [];
    const store = await JetStreamBatchStore.open(nc, new ConnectionWatch(nc), { log: (l) => lines.push(l) });
    const jsm = await jetstreamManager(nc);
    try {
      const items = (tag: string, n: number) => Array.from({ length: n }, (_, i) => ({ itemId: `${tag}-${i}`, request: AskRequest.fromPartial({ question: `question ${i} of ${tag}` }) }));
      await store.create(prepareBatch({ batchId: "reused", items: items("old", 2), label: "" }, { maxBatchItems: 10 }));
      // The earlier batch: item 0 finished (its queue message gone), item 1 still queued.
      const old0 = await jsm.streams.getMessage(BATCH_ITEMS_STREAM, { seq: (await jsm.streams.info(BATCH_ITEMS_STREAM)).state.first_seq });
      expect(BatchItemJob.decode(old0!.data).index).toBe(0);
      expect(await publishResult(jetstream(nc), { ...result(0, "old answer"), batchId: "reused", itemId: "old-0" }, old0!.seq)).toBe(true);
      await jsm.streams.deleteMessage(BATCH_ITEMS_STREAM, old0!.seq);
      // Its record expires (bucket TTL) while that result lives on.
      await kv.purge("batch.reused");
      await expect(store.get("reused")).rejects.toThrow(/no batch reused/);

      const { created } = await store.create(prepareBatch({ batchId: "reused", items: items("new", 3), label: "" }, { maxBatchItems: 10 }));
      expect(created).toBe(true);
      expect((await store.get("reused")).counts).toEqual({ queued: 3, running: 0, succeeded: 0, failed: 0, cancelled: 0 });
      const before: BatchItemResult[] = [];
      for await (const r of store.results("reused", 0, false, signal)) before.push(r);
      expect(before).toEqual([]);

      // The runner drops the earlier batch's queued item and runs this batch's first item, whose result is recorded.
      const claimed = await store.queue.next(signal);
      expect([claimed?.batchId, claimed?.index, claimed?.itemId]).toEqual(["reused", 0, "new-0"]);
      expect(lines.filter((l) => /was queued by an earlier batch reused/.test(l)), lines.join("\n")).toHaveLength(1);
      expect(await claimed!.complete({ ...result(0, "new answer"), batchId: "reused", itemId: "new-0" })).toBe(true);
      const after: BatchItemResult[] = [];
      for await (const r of store.results("reused", 0, false, signal)) after.push(r);
      expect(after.map((r) => [r.itemId, r.finalAnswer?.text])).toEqual([["new-0", "new answer"]]);
      expect((await store.get("reused")).counts).toEqual({ queued: 2, running: 0, succeeded: 1, failed: 0, cancelled: 0 });
    } finally {
      await store.close();
    }
  });

  it("batches distributed - ListBatches orders from the bucket's keys, reads only the page's records and holds no consumer afterwards", async () => {
    const writer = await JetStreamBatchStore.open(nc, new ConnectionWatch(nc), { log: () => {} });
    for (let i = 0; i < 120; i++) {
      await writer.create(prepareBatch({ batchId: `list-${String(i).padStart(3, "0")}`, items: [{ itemId: "only", request: AskRequest.fromPartial({ question: "q" }) }], label: "" }, { maxBatchItems: 10 }));
    }
    await writer.close();
    const jsm = await jetstreamManager(nc);
    const consumers = async () => (await jsm.streams.info(BATCH_RESULTS_STREAM)).state.consumer_count;
    // A gateway that has not looked at these batches yet (nothing cached).
    const lister = await JetStreamBatchStore.open(nc, new ConnectionWatch(nc), { log: () => {} });
    try {
      const consumersBefore = await consumers();
      const sentBefore = nc.stats().outMsgs;
      const first = await lister.list(5, "");
      const sent = nc.stats().outMsgs - sentBefore;
      // Before: one KV read per batch ever made (120 and more here), and a results consumer per listed batch kept for minutes.
      expect(sent, "messages sent for one page of 5").toBeLessThan(60);
      expect(await consumers()).toBeLessThanOrEqual(consumersBefore);
      expect(first.batches).toHaveLength(5);
      // Paging through everything gives each batch once, newest first (ties by id).
      const all = [...first.batches];
      for (let token = first.nextPageToken; token !== ""; ) {
        const page = await lister.list(25, token);
        all.push(...page.batches);
        token = page.nextPageToken;
      }
      const ids = all.map((b) => b.batchId);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.filter((id) => id.startsWith("list-")).sort()).toEqual(Array.from({ length: 120 }, (_, i) => `list-${String(i).padStart(3, "0")}`));
      const positions = all.map((b) => ({ createdMs: Number(b.createdUnixMs), id: b.batchId }));
      expect([...positions].sort(newestFirst)).toEqual(positions);
      expect(await consumers()).toBeLessThanOrEqual(consumersBefore);
    } finally {
      await lister.close();
    }
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

describe.skipIf(missing !== undefined)(`batch items that run out of deliveries (real nats-server)${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: NatsServer;
  let nc: NatsConnection;
  const settings = { ...DEFAULT_BATCH_QUEUE, ackWaitMs: 1000, maxDeliver: 2 };

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connectNats({ url: server.url, name: "dead-items-test" });
  });

  afterAll(async () => {
    await nc?.close();
    await server?.stop();
  });

  it("batches distributed - items that ran out of deliveries while no gateway was running are recorded FAILED by the next gateway to start, and leave the queue", async () => {
    const signal = new AbortController().signal;
    const first = await JetStreamBatchStore.open(nc, new ConnectionWatch(nc), { log: () => {}, settings });
    const items = Array.from({ length: 2 }, (_, i) => ({ itemId: `doomed-${i}`, request: AskRequest.fromPartial({ question: `question ${i}` }) }));
    await first.create(prepareBatch({ batchId: "doomed", items, label: "" }, { maxBatchItems: 10 }));
    await first.close();

    // A runner that dies with every item it takes, while no gateway is up: each item is delivered twice, then
    // JetStream gives up on it and says so once, in an advisory nobody is subscribed to.
    const runners = await jetstream(nc).consumers.get(BATCH_ITEMS_STREAM, BATCH_RUNNERS_CONSUMER);
    const deliveries = new Map<number, number>();
    await until(async () => {
      const messages = await runners.fetch({ max_messages: 10, expires: 1000 });
      for await (const m of messages) deliveries.set(m.seq, m.info.deliveryCount);
      return deliveries.size === 2 && [...deliveries.values()].every((n) => n === settings.maxDeliver);
    }, "both items to be delivered twice", 10_000, 0);
    // One more pull past ack_wait: JetStream finds both out of deliveries (this is when it advises) and hands out nothing.
    await new Promise((r) => setTimeout(r, settings.ackWaitMs + 100));
    const after: number[] = [];
    for await (const m of await runners.fetch({ max_messages: 10, expires: 1000 })) after.push(m.seq);
    expect(after).toEqual([]);

    const lines: string[] = [];
    const next = await JetStreamBatchStore.open(nc, new ConnectionWatch(nc), { log: (l) => lines.push(l), settings });
    try {
      const ended = await until(async () => {
        const b = await next.get("doomed");
        return b.state === BatchState.BATCH_STATE_COMPLETED ? b : undefined;
      }, "the batch to end (COMPLETED, its items FAILED)", 10_000);
      expect(ended.counts).toEqual({ queued: 0, running: 0, succeeded: 0, failed: 2, cancelled: 0 });
      const results: BatchItemResult[] = [];
      for await (const r of next.results("doomed", 0, false, signal)) results.push(r);
      expect(results.map((r) => [r.itemId, r.state, r.statusCode, r.attempts]).sort()).toEqual([
        ["doomed-0", BatchItemState.BATCH_ITEM_STATE_FAILED, 13, 2],
        ["doomed-1", BatchItemState.BATCH_ITEM_STATE_FAILED, 13, 2],
      ]);
      expect(results.every((r) => /failed on all 2 of its deliveries/.test(r.statusMessage))).toBe(true);
      expect(lines.filter((l) => /doomed.*failed on all 2/.test(l))).toHaveLength(2);
      expect((await (await jetstreamManager(nc)).streams.info(BATCH_ITEMS_STREAM)).state.messages).toBe(0);
    } finally {
      await next.close();
    }
  });
});
