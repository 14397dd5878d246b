import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { AskRequest, BatchState, WebhookDeliveryState } from "@attr-rag/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime, startGatewayServer, type GatewayServerHandle } from "../src/index.js";
import { webhookSetup } from "@attr-rag/batch";
import { STOPPED_ERROR } from "../../batch/src/webhooks/attemptWebhook.js";
import { BatchClient } from "./helpers/batchClient.js";
import { buildDemoStore, QUESTION, testConfig } from "./helpers/demoStore.js";
import { until } from "./helpers/until.js";
import { receiver, trickler, verifies as verifiesWith, type Delivery } from "../../batch/test/helpers/webhookReceiver.js";

const SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const verifies = (d: Delivery) => verifiesWith(SECRET, d);

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ itemId: `q-${i}`, request: AskRequest.fromPartial({ question: `${QUESTION} (${i})`, retrieval: { k: 2 }, generation: { maxTokens: 4 }, attribution: { sentences: false } }) }));

describe("batch webhooks (embedded gateway, outbox in batches.sqlite)", () => {
  let store: Awaited<ReturnType<typeof buildDemoStore>>;
  const stateDir = mkdtempSync(join(tmpdir(), "attr-rag-webhooks-"));
  const open = async (overrides: Record<string, unknown> = {}) => {
    const runtime = await Runtime.open(testConfig(store.dir, { stateDir, webhookSecret: SECRET, webhookAllowedHosts: "127.0.0.1", webhookBackoffMs: 50, batchConcurrency: 1, ...overrides }));
    const server = await startGatewayServer({ runtime, log: () => {} });
    return { server, batches: new BatchClient(server.address) };
  };
  let gateway: { server: GatewayServerHandle; batches: BatchClient };

  beforeAll(async () => {
    store = await buildDemoStore();
    gateway = await open();
  });
  afterAll(async () => {
    gateway?.batches.close();
    await gateway?.server.close();
    store?.remove();
    rmSync(stateDir, { recursive: true, force: true });
  });

  it("webhooks - a receiver refuses the first two deliveries: the third arrives, its signature verifies, one event id, nothing after", async () => {
    let calls = 0;
    const hook = await receiver(() => (++calls <= 2 ? 503 : 204));
    try {
      const created = await gateway.batches.create({ batchId: "wh-1", items: items(2), webhookUrl: hook.url });
      expect(created.batch?.webhook).toEqual({ state: WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_WAITING, attempts: 0, lastError: "" });
      await until(() => hook.deliveries.some((d) => d.answered === 204), "a delivery answered 2xx", 120_000);
      expect(hook.deliveries.map((d) => d.answered)).toEqual([503, 503, 204]);
      expect(new Set(hook.deliveries.map((d) => d.headers["webhook-id"]))).toEqual(new Set(["evt_batch_wh-1_ended"]));
      for (const d of hook.deliveries) expect(await verifies(d)).toBe(true);
      const event = JSON.parse(hook.deliveries[2]!.body) as { id: string; type: string; created_at: number; data: { id: string; total_items: number; counts: Record<string, number> } };
      expect(event).toMatchObject({ id: "evt_batch_wh-1_ended", type: "batch.completed", data: { id: "wh-1", total_items: 2, counts: { succeeded: 2, failed: 0, cancelled: 0 } } });
      const batch = await gateway.batches.get("wh-1");
      expect(batch.state).toBe(BatchState.BATCH_STATE_COMPLETED);
      expect(batch.webhookUrl).toBe(hook.url);
      expect(batch.webhook).toMatchObject({ state: WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_DELIVERED, attempts: 3, lastError: "" });
      expect(Number(batch.webhook!.settledUnixMs)).toBeGreaterThanOrEqual(Number(batch.finishedUnixMs));
      expect(event.created_at).toBe(Math.floor(Number(batch.finishedUnixMs) / 1000));
      // A tampered body does not verify.
      expect(await verifies({ ...hook.deliveries[2]!, body: hook.deliveries[2]!.body.replace("completed", "cancelled") })).toBe(false);
      // Delivered is delivered: no more calls (polled for longer than many backoffs).
      await new Promise((r) => setTimeout(r, 1_500));
      expect(hook.deliveries).toHaveLength(3);
    } finally {
      hook.server.close();
    }
  });

  it("webhooks - an event waiting for its receiver survives a restart of the gateway and is delivered once after it", async () => {
    let up = false;
    const hook = await receiver(() => (up ? 200 : 500));
    try {
      await gateway.batches.create({ batchId: "wh-2", items: items(1), webhookUrl: hook.url });
      await until(() => hook.deliveries.length >= 1, "a first (refused) delivery", 120_000);
      const sending = await until(async () => {
        const b = await gateway.batches.get("wh-2");
        return b.webhook?.attempts ? b : undefined;
      }, "the refused attempt recorded");
      expect(sending.webhook).toMatchObject({ state: WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_SENDING, lastError: "HTTP 500" });
      expect(sending.webhook!.settledUnixMs).toBeUndefined();
      gateway.batches.close();
      await gateway.server.close();
      up = true;
      const refused = hook.deliveries.length;
      gateway = await open();
      await until(() => hook.deliveries.some((d) => d.answered === 200), "delivered after the restart", 30_000);
      expect(hook.deliveries.slice(refused).map((d) => d.answered)).toEqual([200]);
      expect(new Set(hook.deliveries.map((d) => d.headers["webhook-id"]))).toEqual(new Set(["evt_batch_wh-2_ended"]));
    } finally {
      hook.server.close();
    }
  });

  it("webhooks - 127.0.0.1 and 169.254.169.254 are refused without the allow-list; ftp and credentials too; a cancel sends batch.cancelled", async () => {
    // A second gateway (its own store: one process per store) with a secret and no allow-list.
    const otherStore = await buildDemoStore();
    const other = mkdtempSync(join(tmpdir(), "attr-rag-webhooks-b-"));
    const strict = await (async () => {
      const runtime = await Runtime.open(testConfig(otherStore.dir, { stateDir: other, webhookSecret: SECRET, batchConcurrency: 0 }));
      const server = await startGatewayServer({ runtime, log: () => {} });
      return { server, batches: new BatchClient(server.address) };
    })();
    try {
      for (const url of ["http://127.0.0.1:8080/hook", "http://169.254.169.254/latest/meta-data/", "http://[::1]/x", "ftp://example.org/x", "https://user:pw@93.184.216.34/x"]) {
        await expect(strict.batches.create({ batchId: "refused", items: items(1), webhookUrl: url }), url).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
      }
      await expect(strict.batches.get("refused")).rejects.toMatchObject({ code: status.NOT_FOUND });
      // Cancelling ends a batch, and its event says so.
      let cancelled: Delivery | undefined;
      const hook = await receiver(() => 200);
      try {
        await gateway.batches.create({ batchId: "wh-3", items: items(3), webhookUrl: hook.url });
        await gateway.batches.cancel("wh-3");
        await until(() => (cancelled = hook.deliveries.find((d) => d.answered === 200)), "the cancel's event", 60_000);
        expect(JSON.parse(cancelled!.body)).toMatchObject({ type: "batch.cancelled", data: { id: "wh-3" } });
      } finally {
        hook.server.close();
      }
    } finally {
      strict.batches.close();
      await strict.server.close();
      rmSync(other, { recursive: true, force: true });
      otherStore.remove();
    }
  });

  it("webhooks - a gateway without a signing secret refuses webhook_url (FAILED_PRECONDITION); a bad secret stops the start", () => {
    const base = testConfig(store.dir);
    const none = webhookSetup(base);
    expect("unavailable" in none && none.unavailable.code).toBe(status.FAILED_PRECONDITION);
    expect(() => webhookSetup({ ...base, webhookSecret: "whsec_c2hvcnQ=" })).toThrow(/at least 24 random bytes/);
    expect(() => webhookSetup({ ...base, webhookSecretFile: join(stateDir, "missing") })).toThrow(/cannot read webhookSecretFile/);
    expect(() => webhookSetup({ ...base, webhookSecret: SECRET, webhookSecretFile: join(stateDir, "missing") })).toThrow(/not both/);
    const ok = webhookSetup({ ...base, webhookSecret: SECRET, webhookAllowedHosts: " 127.0.0.1, Receiver.Local " });
    expect("key" in ok && ok.allowedHosts).toEqual(["127.0.0.1", "receiver.local"]);
  });

  it("webhooks - a receiver that trickles its answer holds its attempt until webhookAttemptTimeoutMs, not the other batches' events; closing the gateway cuts it short, a failed attempt made again", async () => {
    const slow = await trickler();
    const hook = await receiver(() => 200);
    // No items run here (batchConcurrency 0): a cancel ends a batch at once.
    const settings = { webhookAttemptTimeoutMs: 3_000, batchConcurrency: 0 };
    gateway.batches.close();
    await gateway.server.close();
    gateway = await open(settings);
    try {
      await gateway.batches.create({ batchId: "wh-slow", items: items(1), webhookUrl: slow.url });
      await gateway.batches.cancel("wh-slow");
      await until(() => slow.requests.length >= 1, "the trickling receiver's first request");
      await gateway.batches.create({ batchId: "wh-beside", items: items(1), webhookUrl: hook.url });
      await gateway.batches.cancel("wh-beside");
      await until(() => hook.deliveries.length >= 1, "the other batch's event delivered");
      // Delivered while the first attempt was still held: the other event did not wait for it.
      expect(slow.requests[0]!.closed).toBe(false);
      expect((await gateway.batches.get("wh-beside")).webhook).toMatchObject({ state: WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_DELIVERED, attempts: 1 });
      // The deadline ends the held attempt (the bytes keep coming): a failed attempt, made again.
      const cut = await until(async () => {
        const w = (await gateway.batches.get("wh-slow")).webhook;
        return w !== undefined && w.attempts >= 1 ? w : undefined;
      }, "the held attempt cut off at its deadline");
      expect(cut).toMatchObject({ state: WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_SENDING, lastError: "no complete answer within 3 s" });
      expect(slow.requests[0]!.closed).toBe(true);
      // Closing while an attempt is held (one just begun, far from its deadline) cuts it short.
      const held = await until(() => slow.requests.find((r) => !r.closed && Date.now() - r.startedMs < 1_000), "a newly held attempt");
      gateway.batches.close();
      await gateway.server.close();
      expect(held.closed).toBe(true);
      const made = slow.requests.length;
      gateway = await open(settings);
      // Recorded as failed (not delivered, not given up), with why; the reopened gateway makes it again at once.
      expect((await gateway.batches.get("wh-slow")).webhook).toMatchObject({ state: WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_SENDING, attempts: made, lastError: STOPPED_ERROR });
      slow.release();
      await until(async () => (await gateway.batches.get("wh-slow")).webhook?.state === WebhookDeliveryState.WEBHOOK_DELIVERY_STATE_DELIVERED, "delivered once the receiver answers");
    } finally {
      slow.close();
      hook.server.close();
    }
  });
});
