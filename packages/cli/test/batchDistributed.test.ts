import { createHmac, randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { BATCH_RESULTS_STREAM, WEBHOOKS_STREAM, BatchItemState, BatchState, batchResultsFilter, type Batch, type BatchItemResult, type WorkerStats } from "@attr-rag/contracts";
import { connectNats, natsServerMissing, type NatsConnection } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { listWorkerStats } from "@attr-rag/worker";
import { RemoteBatches } from "@attr-rag/gateway";
import { allResults, QUESTIONS, rowsFile, until } from "./helpers/batches.js";
import type { LocalCluster } from "@attr-rag/cluster";
import { PASSWORDS, startCluster } from "./helpers/cluster.js";
import { ingestDemoCorpus, REPO_ROOT, runCli } from "./helpers/runCli.js";
import { webhookReceiver } from "./helpers/webhookReceiver.js";

const dir = mkdtempSync(join(tmpdir(), "attr-rag-batch-dist-"));
const store = join(dir, "store");
const ENGINE = ["--context-size", "16384", "--sequences", "4", "--threads", "1"];
/** Tiny Asks: the batch's mechanics are under test, not the model. */
const REQUEST = ["--k", "3", "--max-tokens", "6"];

const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString("base64")}`;

const failures = (results: readonly BatchItemResult[]) =>
  results.filter((r) => r.state !== BatchItemState.BATCH_ITEM_STATE_SUCCEEDED).map((r) => `${r.itemId}: ${r.statusCode} ${r.statusMessage}\n`).join("");
const ended = (b: Batch) => b.state === BatchState.BATCH_STATE_COMPLETED || b.state === BatchState.BATCH_STATE_CANCELLED;

/** Both workers' stats, from their own NATS services. */
async function workerStats(): Promise<WorkerStats[]> {
  const all = await listWorkerStats(probe, 1_000);
  expect(all.map((w) => w.workerId).sort()).toEqual(["worker-1", "worker-2"]);
  return all;
}

let cluster: LocalCluster;
/** The gateways still running, oldest first: a test may have killed one and started another in its place. */
const liveGateways = () =>
  cluster.gatewayAddresses.filter((_, i) => {
    const child = cluster.gateways[i]!.child;
    return child.exitCode === null && child.signalCode === null;
  });
let probe: NatsConnection;
const missing = natsServerMissing();

beforeAll(async () => {
  if (missing !== undefined) return;
  const ingest = await ingestDemoCorpus(store);
  expect(ingest.code, ingest.stderr).toBe(0);
  cluster = await startCluster({
    store,
    workers: 2,
    gateways: 2,
    engine: ENGINE,
    ackWaitSeconds: 2,
    maxDeliver: 3,
    gatewayArgs: [...REQUEST, "--batch-ack-wait", "3", "--webhook-allowed-hosts", "127.0.0.1", "--webhook-backoff-ms", "200"],
    env: { ATTR_RAG_WEBHOOK_SECRET: WEBHOOK_SECRET },
  });
  probe = await connectNats({ url: cluster.url, name: "probe", user: "gateway", pass: PASSWORDS.gateway });
}, 180_000);

afterAll(async () => {
  await probe?.close();
  await cluster?.[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(missing !== undefined)(`batches in distributed mode (real nats-server, 2 gateways, 2 workers)${missing ? ` (skipped: ${missing})` : ""}`, () => {
  it("batches distributed - the same --id resubmitted returns the same batch; another payload under that id is refused, nothing queued", async () => {
    const rows = rowsFile(dir, "idem", 2, { max_tokens: 2 });
    const first = await runCli(["batch", "submit", rows, "--server", liveGateways()[1]!, "--id", "idem", "--json"]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ id: "idem", total: 2, created: true });
    const again = await runCli(["batch", "submit", rows, "--server", liveGateways()[0]!, "--id", "idem", "--json"]);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ id: "idem", created: false });
    const plain = await runCli(["batch", "submit", rows, "--server", liveGateways()[0]!, "--id", "idem"]);
    expect(plain.stderr).toMatch(/already submitted \(same id and items\): batch idem with 2 items/);
    expect(JSON.parse(again.stdout).items_sha256).toBe(JSON.parse(first.stdout).items_sha256);
    const other = await runCli(["batch", "submit", rowsFile(dir, "idem-other", 3), "--server", liveGateways()[0]!, "--id", "idem"]);
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/ALREADY_EXISTS: batch idem already exists with other items/);
    const relabelled = await runCli(["batch", "submit", rows, "--server", liveGateways()[1]!, "--id", "idem", "--label", "renamed"]);
    expect(relabelled.code).toBe(2);
    expect(relabelled.stderr).toMatch(/ALREADY_EXISTS: batch idem already exists with the label "", not "renamed"/);
    const watched = await runCli(["batch", "watch", "idem", "--server", liveGateways()[0]!]);
    expect(watched.code, watched.stderr).toBe(0);
    const jsm = await jetstreamManager(probe);
    const info = await jsm.streams.info(BATCH_RESULTS_STREAM, { subjects_filter: batchResultsFilter("idem") });
    expect(Object.keys(info.state.subjects ?? {})).toHaveLength(2);
  });

  it("batches distributed - a batch with a webhook on two gateways: one delivery per attempt, refused once, then delivered once, signed", async () => {
    const hook = await webhookReceiver((before) => (before === 0 ? 500 : 200));
    const { deliveries, url } = hook;
    try {
      const rows = rowsFile(dir, "hooked", 3, { max_tokens: 2, sentences: false });
      const submitted = await runCli(["batch", "submit", rows, "--server", liveGateways()[0]!, "--id", "hooked", "--webhook-url", url, "--wait"]);
      expect(submitted.code, submitted.stderr).toBe(0);
      await until(async () => (deliveries.some((d) => d.answered === 200) ? true : undefined), "the webhook delivered", 60_000);
      // Nothing left to deliver on either gateway (the event left the queue), then long enough for both
      // gateways' once-a-second looks and a retry to show a second delivery, were there one.
      const jsm = await jetstreamManager(probe);
      await until(async () => ((await jsm.streams.info(WEBHOOKS_STREAM)).state.messages === 0 ? true : undefined), "the webhook queue to be empty", 30_000);
      await new Promise((r) => setTimeout(r, 3_000));
      expect(deliveries.map((d) => d.answered), cluster.logs()).toEqual([500, 200]);
      expect(new Set(deliveries.map((d) => d.id))).toEqual(new Set(["evt_batch_hooked_ended"]));
      for (const d of deliveries) {
        const expected = createHmac("sha256", Buffer.from(WEBHOOK_SECRET.slice("whsec_".length), "base64")).update(`${d.id}.${d.timestamp}.${d.body}`).digest("base64");
        expect(d.signature).toBe(`v1,${expected}`);
      }
      expect(JSON.parse(deliveries[1]!.body)).toMatchObject({ id: "evt_batch_hooked_ended", type: "batch.completed", data: { id: "hooked", total_items: 3, counts: { succeeded: 3, failed: 0, cancelled: 0 } } });
      // One of the two gateways queued it; the attempts are said in the logs of whichever gateway made them.
      expect(cluster.logs().match(/batch hooked ended; its event is queued/g), cluster.logs()).toHaveLength(1);
      expect(cluster.logs().match(/evt_batch_hooked_ended for batch hooked (delivered|attempt)/g), cluster.logs()).toHaveLength(2);
    } finally {
      hook.close();
    }
  });

  it("batches distributed - kill -9 of both gateways while a batch's webhook event waits for its receiver: a restarted gateway delivers it, once", async () => {
    let up = false;
    const hook = await webhookReceiver(() => (up ? 200 : 503));
    const { deliveries, url } = hook;
    // Both gateways come back (below), also when an assertion fails first: later tests need two.
    onTestFinished(async () => {
      while (liveGateways().length < 2) await cluster.addGateway();
    });
    try {
      const rows = rowsFile(dir, "hooked-kill", 2, { max_tokens: 2, sentences: false });
      const submitted = await runCli(["batch", "submit", rows, "--server", liveGateways()[0]!, "--id", "hooked-kill", "--webhook-url", url, "--wait"]);
      expect(submitted.code, submitted.stderr).toBe(0);
      await until(async () => (deliveries.length >= 1 ? true : undefined), "a first (refused) delivery", 60_000);
      const live = liveGateways();
      await Promise.all(live.map((address) => cluster.gateways[cluster.gatewayAddresses.indexOf(address)]!.stop("SIGKILL")));
      expect(liveGateways()).toEqual([]);
      up = true;
      const refused = deliveries.length;
      await cluster.addGateway();
      await until(async () => (deliveries.some((d) => d.answered === 200) ? true : undefined), "the event delivered after the restart", 60_000);
      const jsm = await jetstreamManager(probe);
      await until(async () => ((await jsm.streams.info(WEBHOOKS_STREAM)).state.messages === 0 ? true : undefined), "the webhook queue to be empty", 30_000);
      await new Promise((r) => setTimeout(r, 2_000));
      expect(deliveries.slice(refused).map((d) => d.answered), cluster.logs()).toEqual([200]);
      expect(new Set(deliveries.map((d) => d.id))).toEqual(new Set(["evt_batch_hooked-kill_ended"]));
    } finally {
      hook.close();
    }
  });

  it("batches distributed - four Asks at once through one gateway reach both workers (the gateway's defaults leave none idle)", async () => {
    const before = await workerStats();
    const asks = await Promise.all(QUESTIONS.slice(0, 4).map((q) => runCli(["ask", q, "--server", liveGateways()[1]!, "--json", ...REQUEST])));
    for (const a of asks) expect(a.code, a.stderr).toBe(0);
    const after = await workerStats();
    // Each Ask is an occlusion job and a generation job; both workers took some of the eight.
    for (const w of after) expect(w.completedJobs, w.workerId).toBeGreaterThan(before.find((b) => b.workerId === w.workerId)!.completedJobs);
  });

  it("batches distributed - SIGKILL of one gateway mid-batch: the other finishes the 16 items, each with exactly one result", async () => {
    const rows = rowsFile(dir, "kill", 16);
    const [target, other] = liveGateways();
    // The killed gateway comes back (below), also when an assertion fails first: later tests need two.
    let restarted = false;
    onTestFinished(async () => {
      if (!restarted) await cluster.addGateway();
    });
    const submitted = await runCli(["batch", "submit", rows, "--server", target!, "--id", "kill-16"]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const survivor = new RemoteBatches({ server: other! });
    try {
      await until(async () => ((await survivor.get("kill-16")).counts!.succeeded >= 4 ? true : undefined), "4 results");
      const before = await allResults(survivor, "kill-16");
      await cluster.gateways[cluster.gatewayAddresses.indexOf(target!)]!.stop("SIGKILL");
      // Every snapshot the survivor gives while results pour in must add up to the total.
      const sums = new Set<number>();
      const end = await until(async () => {
        const b = await survivor.get("kill-16");
        const c = b.counts!;
        sums.add(c.queued + c.running + c.succeeded + c.failed + c.cancelled);
        return ended(b) ? b : undefined;
      }, "the batch to end on the surviving gateway");
      expect([...sums]).toEqual([16]);
      expect(end.state).toBe(BatchState.BATCH_STATE_COMPLETED);
      const results = await allResults(survivor, "kill-16");
      expect(end.counts, failures(results) + cluster.logs()).toEqual({ queued: 0, running: 0, succeeded: 16, failed: 0, cancelled: 0 });
      expect(results.map((r) => r.itemId).sort()).toEqual(Array.from({ length: 16 }, (_, i) => `kill-${i}`).sort());
      expect(results.map((r) => r.offset)).toEqual(results.map((_, i) => i));
      expect(results.every((r) => r.state === BatchItemState.BATCH_ITEM_STATE_SUCCEEDED)).toBe(true);
      // What was recorded before the kill is what is there after it: the same results, not runs done again.
      for (const r of before) expect(results.find((x) => x.itemId === r.itemId)).toEqual(r);
      // The stream holds one message per item.
      const info = await (await jetstreamManager(probe)).streams.info(BATCH_RESULTS_STREAM, { subjects_filter: batchResultsFilter("kill-16") });
      expect(Object.values(info.state.subjects ?? {})).toEqual(Array(16).fill(1));
    } finally {
      survivor.close();
    }
    // The gateway comes back on the same NATS and serves the batch it had been running.
    restarted = true;
    const address = await cluster.addGateway();
    const back = new RemoteBatches({ server: address });
    try {
      expect((await back.get("kill-16")).state).toBe(BatchState.BATCH_STATE_COMPLETED);
    } finally {
      back.close();
    }
  });

  it("batches distributed - nats-server killed and restarted mid-batch: nothing is lost, the batch finishes", async () => {
    const rows = rowsFile(dir, "restart", 16);
    const submitted = await runCli(["batch", "submit", rows, "--server", liveGateways()[1]!, "--id", "restart-16"]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const batches = new RemoteBatches({ server: liveGateways()[1]! });
    try {
      await until(async () => ((await batches.get("restart-16")).counts!.succeeded >= 3 ? true : undefined), "3 results");
      await cluster.nats.kill();
      await new Promise((r) => setTimeout(r, 1_000));
      await cluster.nats.restart();
      const end = await until(async () => {
        const b = await batches.get("restart-16");
        return ended(b) ? b : undefined;
      }, "the batch to end after the restart");
      const results = await allResults(batches, "restart-16");
      if (process.env.DEBUG_BATCH) console.log(cluster.logs());
      expect(end.counts, failures(results) + cluster.logs()).toEqual({ queued: 0, running: 0, succeeded: 16, failed: 0, cancelled: 0 });
      expect(new Set(results.map((r) => r.itemId)).size).toBe(16);
      expect(results).toHaveLength(16);
    } finally {
      batches.close();
    }
  });

  it("batches distributed - CancelBatch mid-run stops the running items and leaves 0 KV sequences in use on the workers", async () => {
    const rows = rowsFile(dir, "cancel", 24, { max_tokens: 24, k: 6 });
    const submitted = await runCli(["batch", "submit", rows, "--server", liveGateways()[1]!, "--id", "cancel-24"]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const batches = new RemoteBatches({ server: liveGateways()[1]! });
    try {
      // Cancel while items run on the workers. (Not "after the first result": with eight items in flight on two
      // one-slot workers the first result comes only when most items are nearly done, a minute here and past
      // the wait on a loaded CI machine.)
      await until(async () => {
        const b = await batches.get("cancel-24");
        return b.counts!.running >= 2 ? true : undefined;
      }, "items running");
      const cancelled = await runCli(["batch", "cancel", "cancel-24", "--server", liveGateways()[1]!, "--json"]);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      expect(["cancelling", "cancelled"]).toContain(JSON.parse(cancelled.stdout).state);
      const end = await until(async () => {
        const b = await batches.get("cancel-24");
        return ended(b) ? b : undefined;
      }, "the cancel to end every item");
      expect(end.state).toBe(BatchState.BATCH_STATE_CANCELLED);
      const results = await allResults(batches, "cancel-24");
      expect(results).toHaveLength(24);
      expect(end.counts!.cancelled).toBeGreaterThan(0);
      expect(results.filter((r) => r.state === BatchItemState.BATCH_ITEM_STATE_CANCELLED)).toHaveLength(end.counts!.cancelled);
      // Every worker is idle again with no KV sequence held ($SRV.STATS of the workers' own services).
      const stats = await until(async () => {
        const all = await workerStats();
        return all.every((s) => s.runningJobs === 0) ? all : undefined;
      }, "idle workers", 30_000);
      for (const s of stats) expect(s.sequencesInUse).toBe(0);
    } finally {
      batches.close();
    }
  });

  it("batches distributed - a 10,000-item batch over 4 MB goes in one batch submit; its status counts it, and its cancel ends every item", async () => {
    // 10,000 rows of ~500 characters: past gRPC's default 4 MB message limit.
    const pad = " Describe each quantity, each temperature and each time, and say why every step is needed.".repeat(4);
    const path = join(dir, "big.jsonl");
    writeFileSync(path, Array.from({ length: 10_000 }, (_, i) => JSON.stringify({ id: `big-${i}`, question: `${QUESTIONS[i % QUESTIONS.length]}${pad}`, max_tokens: 1, k: 1 })).join("\n") + "\n");
    expect(readFileSync(path).length).toBeGreaterThan(4 * 1024 * 1024);
    const submitted = await runCli(["batch", "submit", path, "--server", liveGateways()[1]!, "--id", "big-10k", "--json"]);
    expect(submitted.code, submitted.stderr).toBe(0);
    expect(JSON.parse(submitted.stdout)).toMatchObject({ id: "big-10k", total: 10_000 });
    const batches = new RemoteBatches({ server: liveGateways()[1]! });
    try {
      const b = await batches.get("big-10k");
      expect(b.totalItems).toBe(10_000);
      const c = b.counts!;
      expect(c.queued + c.running + c.succeeded + c.failed + c.cancelled).toBe(10_000);
      await batches.cancel("big-10k");
      const end = await until(async () => {
        const x = await batches.get("big-10k");
        return ended(x) ? x : undefined;
      }, "every item of the cancelled 10,000");
      expect(end.counts!.succeeded + end.counts!.failed + end.counts!.cancelled).toBe(10_000);
      let n = 0;
      await batches.results("big-10k", 9_990, false, () => void n++, new AbortController().signal);
      expect(n).toBe(10);
    } finally {
      batches.close();
    }
  });
});
