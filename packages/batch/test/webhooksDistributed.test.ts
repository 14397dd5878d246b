// Batch webhooks in distributed mode, on a real nats-server: the gateways' batch stores and webhook senders
// run in this process (two or more, each on its own connection), the batches' items are run by hand, and
// the receiver is a real HTTP server. The whole-cluster version is in packages/cli/test/batchDistributed.test.ts.
import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { AskRequest, BatchItemResult, BatchItemState, WEBHOOK_SENDERS_CONSUMER, WEBHOOKS_STREAM, WebhookDeliveryState } from "@attr-rag/contracts";
import { connectNats, ConnectionWatch, natsServerMissing, startNatsServer, type NatsConnection, type NatsServer } from "@attr-rag/nats";
import { metricsRegistry } from "@attr-rag/telemetry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_BATCH_QUEUE, ensureBatchStreams } from "../src/jetstream/batchStreams.js";
import { JetStreamBatchStore } from "../src/jetstream/JetStreamBatchStore.js";
import { prepareBatch } from "../src/index.js";
import { STOPPED_ERROR } from "../src/webhooks/attemptWebhook.js";
import { JetStreamWebhookSender } from "../src/webhooks/JetStreamWebhookSender.js";
import { parseWebhookSecret } from "../src/webhooks/signWebhook.js";
import { until } from "../../gateway/test/helpers/until.js";
import { receiver, trickler, verifies } from "./helpers/webhookReceiver.js";

const missing = natsServerMissing();
const SECRET = `whsec_${randomBytes(32).toString("base64")}`;
/** Short, so a gateway that died holding an event is replaced within the test. */
const ACK_WAIT_MS = 2_000;
const SETTINGS = { ...DEFAULT_BATCH_QUEUE, ackWaitMs: ACK_WAIT_MS };

interface Gateway {
  nc: NatsConnection;
  store: JetStreamBatchStore;
  sender?: JetStreamWebhookSender;
  lines: string[];
  close(): Promise<void>;
}

const items = (id: string, n: number) => Array.from({ length: n }, (_, i) => ({ itemId: `${id}-${i}`, request: AskRequest.fromPartial({ question: `question ${i} of ${id}` }) }));

describe.skipIf(missing !== undefined)(`batch webhooks, distributed (real nats-server)${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: NatsServer;
  let probe: NatsConnection;
  let kv: KV;
  const open: Gateway[] = [];

  /** One gateway's side: its own connection, batch store and (unless `sending` is false) webhook sender. */
  async function gateway(sending = true, retryForMs = 60_000, attemptTimeoutMs = 10_000): Promise<Gateway> {
    const nc = await connectNats({ url: server.url, name: "webhooks-test-gateway" });
    const lines: string[] = [];
    const log = (l: string) => void lines.push(l);
    const store = await JetStreamBatchStore.open(nc, new ConnectionWatch(nc), { log, settings: SETTINGS });
    const sender = sending
      ? new JetStreamWebhookSender({ store, key: parseWebhookSecret(SECRET, "test"), allowedHosts: ["127.0.0.1"], retryForMs, backoffMs: 100, attemptTimeoutMs, ackWaitMs: ACK_WAIT_MS, log }).start()
      : undefined;
    let closed = false;
    const g: Gateway = {
      nc,
      store,
      ...(sender !== undefined ? { sender } : {}),
      lines,
      close: async () => {
        if (closed) return;
        closed = true;
        await sender?.stop();
        await store.close();
        await nc.close();
      },
    };
    open.push(g);
    return g;
  }

  /** Runs `n` items from the shared queue through `g`'s runner side: each gets a SUCCEEDED result. */
  async function runItems(g: Gateway, n: number): Promise<void> {
    const signal = new AbortController().signal;
    for (let done = 0; done < n; ) {
      const claimed = await g.store.queue.next(signal);
      if (claimed === undefined) continue;
      const result = BatchItemResult.fromPartial({ batchId: claimed.batchId, itemId: claimed.itemId, index: claimed.index, state: BatchItemState.BATCH_ITEM_STATE_SUCCEEDED, finalAnswer: { text: `answer ${claimed.index}` }, attempts: 1, finishedUnixMs: Date.now() });
      expect(await claimed.complete(result)).toBe(true);
      done++;
    }
  }

  /** Nothing left anywhere: no event in the queue or held by a gateway, no batch marked as pending. */
  async function settled(): Promise<boolean> {
    const jsm = await jetstreamManager(probe);
    const stream = await jsm.streams.info(WEBHOOKS_STREAM);
    const consumer = await jsm.consumers.info(WEBHOOKS_STREAM, WEBHOOK_SENDERS_CONSUMER);
    const marks: string[] = [];
    for await (const k of await kv.keys("webhook.*")) marks.push(k);
    return stream.state.messages === 0 && consumer.num_ack_pending === 0 && consumer.num_pending === 0 && marks.length === 0;
  }

  beforeAll(async () => {
    server = await startNatsServer();
    probe = await connectNats({ url: server.url, name: "webhooks-test-probe" });
    kv = await ensureBatchStreams(probe, await jetstreamManager(probe), SETTINGS);
  });

  afterAll(async () => {
    for (const g of open) await g.close().catch(() => {});
    await probe?.close();
    await server?.stop();
  });

  it("webhooks distributed - two gateways: the event is queued once, refused once, then delivered once; signature verifies; nothing after", async () => {
    let calls = 0;
    const hook = await receiver(() => (++calls === 1 ? 503 : 200));
    const [a, b] = [await gateway(), await gateway()];
    try {
      await a.store.create({ ...prepareBatch({ batchId: "whd-1", items: items("whd-1", 3), label: "" }, { maxBatchItems: 10 }), webhookUrl: hook.url });
      // The pending mark is there from the start, before any item ran.
      expect((await kv.get("webhook.whd-1"))?.operation).toBe("PUT");
      expect((await b.store.get("whd-1")).webhook).toEqual({ state: WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_WAITING, attempts: 0, lastError: "" });
      await runItems(b, 3);
      await until(() => hook.deliveries.some((d) => d.answered === 200), "a delivery answered 2xx", 30_000);
      await until(settled, "the queue, the senders and the marks to be empty", 10_000);
      // Longer than two sweeps of each gateway and several backoffs: nothing more arrives.
      await new Promise((r) => setTimeout(r, 2_500));
      expect(hook.deliveries.map((d) => d.answered)).toEqual([503, 200]);
      expect(new Set(hook.deliveries.map((d) => d.headers["webhook-id"]))).toEqual(new Set(["evt_batch_whd-1_ended"]));
      for (const d of hook.deliveries) expect(await verifies(SECRET, d)).toBe(true);
      const batch = await a.store.get("whd-1");
      expect(batch.webhookUrl).toBe(hook.url);
      // Whichever gateway made each attempt wrote it into the batch's record.
      expect(batch.webhook).toMatchObject({ state: WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_DELIVERED, attempts: 2, lastError: "" });
      expect(Number(batch.webhook!.settledUnixMs)).toBeGreaterThanOrEqual(Number(batch.finishedUnixMs));
      expect(JSON.parse(hook.deliveries[1]!.body)).toEqual({
        id: "evt_batch_whd-1_ended",
        type: "batch.completed",
        created_at: Math.floor(Number(batch.finishedUnixMs) / 1000),
        data: { id: "whd-1", total_items: 3, counts: { succeeded: 3, failed: 0, cancelled: 0 } },
      });
      // Both gateways looked every second; one of them queued the event, and two attempts were made in all.
      const lines = [...a.lines, ...b.lines];
      expect(lines.filter((l) => /batch whd-1 ended; its event is queued/.test(l)), lines.join("\n")).toHaveLength(1);
      expect(lines.filter((l) => /evt_batch_whd-1_ended .*(delivered|failed)/.test(l)), lines.join("\n")).toHaveLength(2);
    } finally {
      hook.server.close();
      await a.close();
      await b.close();
    }
  });

  it("webhooks distributed - the gateway that ran the batch dies before any sender looked: a gateway started later queues and delivers it, once; a cancel says batch.cancelled", async () => {
    const hook = await receiver(() => 204);
    const runner = await gateway(false);
    try {
      await runner.store.create({ ...prepareBatch({ batchId: "whd-2", items: items("whd-2", 2), label: "" }, { maxBatchItems: 10 }), webhookUrl: hook.url });
      await runItems(runner, 2);
      await runner.store.create({ ...prepareBatch({ batchId: "whd-3", items: items("whd-3", 4), label: "" }, { maxBatchItems: 10 }), webhookUrl: hook.url });
      await runner.store.cancel("whd-3");
      await runner.nc.close(); // no goodbye: what it had not done stays undone
      expect(hook.deliveries).toHaveLength(0);
      const later = await gateway();
      await until(() => hook.deliveries.length >= 2, "both events delivered", 30_000);
      await until(settled, "the queue, the senders and the marks to be empty", 10_000);
      expect(hook.deliveries).toHaveLength(2);
      const events = Object.fromEntries(hook.deliveries.map((d) => [d.headers["webhook-id"], JSON.parse(d.body) as { type: string; data: { counts: Record<string, number> } }]));
      expect(events["evt_batch_whd-2_ended"]).toMatchObject({ type: "batch.completed", data: { counts: { succeeded: 2, failed: 0, cancelled: 0 } } });
      expect(events["evt_batch_whd-3_ended"]).toMatchObject({ type: "batch.cancelled", data: { counts: { succeeded: 0, failed: 0, cancelled: 4 } } });
      for (const d of hook.deliveries) expect(await verifies(SECRET, d)).toBe(true);
      await later.close();
    } finally {
      hook.server.close();
    }
  });

  it("webhooks distributed - a gateway that took the event and died before the POST: after ack_wait another gateway delivers it, once", async () => {
    const hook = await receiver(() => 200);
    const [dying, other] = [await gateway(false), await gateway(false)];
    try {
      await dying.store.create({ ...prepareBatch({ batchId: "whd-4", items: items("whd-4", 1), label: "" }, { maxBatchItems: 10 }), webhookUrl: hook.url });
      await runItems(dying, 1);
      await until(async () => (await other.store.get("whd-4")).finishedUnixMs !== undefined, "the other gateway to see the batch end");
      // Both look at the same moment and both see it ended: the event is in the queue once.
      const looks = await Promise.all([dying.store.queueEndedWebhooks(), other.store.queueEndedWebhooks()]);
      expect(looks.flat()).toEqual(["whd-4"]);
      expect((await (await jetstreamManager(probe)).streams.info(WEBHOOKS_STREAM)).state.messages).toBe(1);
      // Queued already: a later look queues nothing.
      expect(await dying.store.queueEndedWebhooks()).toEqual([]);
      await other.close();
      const held = await until(() => dying.store.webhooks.next(new AbortController().signal), "the event, taken", 10_000);
      const takenMs = Date.now();
      expect(held.event.id).toBe("evt_batch_whd-4_ended");
      await dying.nc.close(); // it never says delivered, nor failed
      const heir = await gateway();
      const t0 = Date.now();
      await until(() => hook.deliveries.length >= 1, "the event delivered by the other gateway", 30_000);
      // Not before ack_wait: the queue kept it for the silent gateway that long (less the time the message took to reach it).
      expect(hook.deliveries[0]!.atMs - takenMs).toBeGreaterThanOrEqual(ACK_WAIT_MS - 250);
      await until(settled, "the queue, the senders and the marks to be empty", 10_000);
      expect(hook.deliveries).toHaveLength(1);
      expect(hook.deliveries[0]!.headers["webhook-id"]).toBe("evt_batch_whd-4_ended");
      // The second delivery of the message (the dead gateway's was the first), handed out once ack_wait had passed.
      expect(heir.lines.filter((l) => /evt_batch_whd-4_ended for batch whd-4 delivered \(attempt 2, HTTP 200\)/.test(l)), heir.lines.join("\n")).toHaveLength(1);
      expect(Date.now() - t0).toBeLessThan(30_000);
      await heir.close();
    } finally {
      hook.server.close();
    }
  });

  it("webhooks distributed - a receiver that never answers 2xx: attempts stop once webhookRetryFor has passed; GetBatch says gave up, with the last error", async () => {
    const attemptsCounted = async (outcome: string) => ((await metricsRegistry.getSingleMetric("attr_rag_webhook_attempts_total")?.get())?.values ?? []).find((v) => v.labels.outcome === outcome)?.value ?? 0;
    const [failedBefore, gaveUpBefore] = [await attemptsCounted("failed"), await attemptsCounted("gave_up")];
    const hook = await receiver(() => 500);
    const g = await gateway(true, 3_000);
    try {
      await g.store.create({ ...prepareBatch({ batchId: "whd-5", items: items("whd-5", 1), label: "" }, { maxBatchItems: 10 }), webhookUrl: hook.url });
      await runItems(g, 1);
      const gaveUp = await until(async () => {
        const b = await g.store.get("whd-5");
        return b.webhook?.state === WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_GAVE_UP ? b : undefined;
      }, "the delivery given up", 20_000);
      expect(gaveUp.webhook).toMatchObject({ attempts: hook.deliveries.length, lastError: expect.stringMatching(/^HTTP 500, after \d+ attempts$/) });
      expect(hook.deliveries.length).toBeGreaterThanOrEqual(2);
      await until(settled, "the queue, the senders and the marks to be empty", 10_000);
      const attempts = hook.deliveries.length;
      await new Promise((r) => setTimeout(r, 1_500));
      expect(hook.deliveries).toHaveLength(attempts);
      // /metrics counts them: every attempt but the last failed, the last gave up.
      expect(await attemptsCounted("failed")).toBe(failedBefore + attempts - 1);
      expect(await attemptsCounted("gave_up")).toBe(gaveUpBefore + 1);
      expect(g.lines.filter((l) => /evt_batch_whd-5_ended for batch whd-5 given up: HTTP 500/.test(l)), g.lines.join("\n")).toHaveLength(1);
    } finally {
      hook.server.close();
      await g.close();
    }
  });

  it("webhooks distributed - a host name that does not resolve is retried (not given up at once) until webhookRetryFor has passed", async () => {
    const g = await gateway(true, 2_500, 1_000);
    try {
      // Under the reserved .invalid TLD: the resolver answers that the name does not exist (RFC 6761).
      await g.store.create({ ...prepareBatch({ batchId: "whd-8", items: items("whd-8", 1), label: "" }, { maxBatchItems: 10 }), webhookUrl: "http://receiver.invalid/hooks/attr-rag" });
      await runItems(g, 1);
      const gaveUp = await until(async () => {
        const b = await g.store.get("whd-8");
        return b.webhook?.state === WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_GAVE_UP ? b.webhook : undefined;
      }, "the delivery given up once its retry time passed", 20_000);
      // A resolver that hangs (no DNS server at all) ends at the attempt's deadline instead: retried the same.
      expect(gaveUp.lastError).toMatch(/^(webhook_url host receiver\.invalid does not resolve \([A-Z_]+\)|no complete answer within 1 s), after \d+ attempts$/);
      expect(gaveUp.attempts).toBeGreaterThanOrEqual(2);
      expect(g.lines.filter((l) => /evt_batch_whd-8_ended for batch whd-8 attempt 1 failed/.test(l)), g.lines.join("\n")).toHaveLength(1);
      await until(settled, "the queue, the senders and the marks to be empty", 10_000);
    } finally {
      await g.close();
    }
  });

  it("webhooks distributed - a receiver that trickles its answer holds its attempt until its deadline, not the other events; stop() cuts it short and the event goes back to the queue", async () => {
    const slow = await trickler();
    const hook = await receiver(() => 200);
    const a = await gateway(true, 60_000, 3_000);
    try {
      await a.store.create({ ...prepareBatch({ batchId: "whd-6", items: items("whd-6", 1), label: "" }, { maxBatchItems: 10 }), webhookUrl: slow.url });
      await runItems(a, 1);
      await a.store.queueEndedWebhooks(); // rather than wait for the once-a-second look
      await until(() => slow.requests.length >= 1, "the trickling receiver's first request");
      await a.store.create({ ...prepareBatch({ batchId: "whd-7", items: items("whd-7", 1), label: "" }, { maxBatchItems: 10 }), webhookUrl: hook.url });
      await runItems(a, 1);
      await a.store.queueEndedWebhooks();
      await until(() => hook.deliveries.length >= 1, "the other batch's event delivered");
      // Delivered while the first attempt was still held: the other event did not wait for it.
      expect(slow.requests[0]!.closed).toBe(false);
      // The deadline ends the held attempt (the bytes keep coming): a failed attempt, made again.
      const cut = await until(async () => {
        const w = (await a.store.get("whd-6")).webhook;
        return w !== undefined && w.attempts >= 1 ? w : undefined;
      }, "the held attempt cut off at its deadline");
      expect(cut).toMatchObject({ state: WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_SENDING, lastError: "no complete answer within 3 s" });
      expect(slow.requests[0]!.closed).toBe(true);
      // Stopping while an attempt is held (one just begun, far from its deadline) cuts it short.
      const held = await until(() => slow.requests.find((r) => !r.closed && Date.now() - r.startedMs < 1_000), "a newly held attempt");
      await a.sender!.stop();
      expect(held.closed).toBe(true);
      expect((await a.store.get("whd-6")).webhook).toMatchObject({ state: WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_SENDING, attempts: slow.requests.length, lastError: STOPPED_ERROR });
      // Not acknowledged: still in the work queue, and another gateway delivers it.
      expect((await (await jetstreamManager(probe)).streams.info(WEBHOOKS_STREAM)).state.messages).toBe(1);
      slow.release();
      const b = await gateway();
      await until(() => slow.answered() === 1, "the event delivered by the other gateway");
      await until(settled, "the queue, the senders and the marks to be empty", 10_000);
      expect((await b.store.get("whd-6")).webhook).toMatchObject({ state: WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_DELIVERED, attempts: slow.requests.length + 1 });
      await b.close();
    } finally {
      slow.close();
      hook.server.close();
      await a.close();
    }
  });
});
