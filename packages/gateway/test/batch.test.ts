import { readFileSync } from "node:fs";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { AskRequest, AttributionMethod, Baseline, BatchItemState, BatchState, type AskEvent, type Batch, type BatchItem, type DeepPartial } from "@attr-rag/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAsk, Runtime, startGatewayServer, type GatewayServerHandle } from "../src/index.js";
import { BatchClient } from "./helpers/batchClient.js";
import { bufCurl, jsonMessages } from "./helpers/bufCurl.js";
import { buildDemoStore, REPO_ROOT, testConfig } from "./helpers/demoStore.js";
import { askStream, attrRagClient } from "./helpers/grpcClients.js";
import { until } from "./helpers/until.js";

const QUESTIONS: string[] = readFileSync(join(REPO_ROOT, "examples/demo-corpus/questions.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((l) => (JSON.parse(l) as { question: string }).question);

const stageOf = (events: readonly AskEvent[], c: string): any => events.find((e) => e.stage?.$case === c)?.stage?.value;

/**
 * Six Asks, each down another path: a demo question as it comes, then other k and lengths, a baseline, a
 * coalition method and occluded answers. Each is run again alone to compare, so every item costs two Asks:
 * items that took a path already taken (other demo questions, other lengths alone) added only time.
 */
function sixItems(): BatchItem[] {
  const items: BatchItem[] = [{ itemId: "q-1", request: AskRequest.fromPartial({ question: QUESTIONS[0]!, generation: { maxTokens: 6 } }) }];
  // Each on another demo question.
  const extra: [number, DeepPartial<AskRequest>][] = [
    [2, { retrieval: { k: 3 }, generation: { maxTokens: 12 } }],
    [3, { baseline: { baseline: Baseline.BASELINE_TOPK, k: 3 } }],
    [4, { attribution: { method: AttributionMethod.ATTRIBUTION_METHOD_LEAVE_ONE_OUT_LOGLIK } }],
    [5, { retrieval: { k: 8 } }],
    [7, { includeOccludedAnswers: true }],
  ];
  extra.forEach(([q, e], i) => items.push({ itemId: `variant-${i + 1}`, request: AskRequest.fromPartial({ question: QUESTIONS[q % QUESTIONS.length]!, ...e }) }));
  return items;
}

describe("batches (embedded gateway, batches.sqlite)", () => {
  let store: Awaited<ReturnType<typeof buildDemoStore>>;
  let runtime: Runtime;
  let server: GatewayServerHandle;
  let batches: BatchClient;
  const logs: string[] = [];

  beforeAll(async () => {
    store = await buildDemoStore();
    // Answers of 8 tokens by default: every comparison below is token for token, whatever the length.
    runtime = await Runtime.open(testConfig(store.dir, { maxTokens: 8 }));
    server = await startGatewayServer({ runtime, log: (line) => logs.push(line) });
    batches = new BatchClient(server.address);
  });

  afterAll(async () => {
    batches?.close();
    await server?.close();
    store?.remove();
  });

  it("batches - a 6-item batch completes, and every item's answer and selection equal the same Ask run alone", async () => {
    const items = sixItems();
    expect(items).toHaveLength(6);
    const created = await batches.create({ batchId: "six", items, label: "demo questions" });
    expect(created.created).toBe(true);
    expect(created.batch).toMatchObject({ batchId: "six", totalItems: 6, label: "demo questions" });

    const watched = await batches.watch("six");
    expect(watched.error).toBeUndefined();
    const last = watched.batches.at(-1)!;
    expect(last.state).toBe(BatchState.BATCH_STATE_COMPLETED);
    expect(last.counts).toEqual({ queued: 0, running: 0, succeeded: 6, failed: 0, cancelled: 0 });
    expect(last.finishedUnixMs).toBeGreaterThanOrEqual(Number(last.createdUnixMs));
    expect(last.etaSeconds).toBeUndefined();
    expect(last.itemsPerMinute).toBeGreaterThan(0);
    // Progress only moves forward, and while it ran it said how long it still needed.
    const done = watched.batches.map((b) => b.counts!.succeeded);
    expect(done).toEqual([...done].sort((a, b) => a - b));
    for (const b of watched.batches) expect(b.counts!.queued + b.counts!.running + b.counts!.succeeded + b.counts!.failed + b.counts!.cancelled).toBe(6);
    expect(watched.batches.some((b) => b.state === BatchState.BATCH_STATE_RUNNING && b.etaSeconds !== undefined && b.etaSeconds > 0)).toBe(true);

    const { results, error } = await batches.results("six");
    expect(error).toBeUndefined();
    expect(results.map((r) => r.offset)).toEqual(results.map((_, i) => i));
    expect(results.map((r) => r.itemId).sort()).toEqual(items.map((i) => i.itemId).sort());
    // One runner slot: items ran in submission order.
    expect(results.map((r) => r.index)).toEqual(items.map((_, i) => i));

    const client = attrRagClient(server.address);
    try {
      for (const r of results) {
        expect(r.state, `${r.itemId}: ${r.statusMessage}`).toBe(BatchItemState.BATCH_ITEM_STATE_SUCCEEDED);
        expect(r.statusCode).toBe(status.OK);
        expect(r.attempts).toBe(1);
        const alone = await askStream(client, items[r.index]!.request!);
        expect(alone.error).toBeUndefined();
        expect(r.finalAnswer, r.itemId).toEqual(stageOf(alone.events, "finalAnswer"));
        expect(r.selection, r.itemId).toEqual(stageOf(alone.events, "selection"));
        expect(r.attribution, r.itemId).toEqual(stageOf(alone.events, "attribution"));
        expect(r.sets).toEqual(stageOf(alone.events, "aligned")?.sets ?? []);
        // The same engine work (its wall time aside).
        expect({ ...r.done?.counters, elapsedMs: 0 }).toEqual({ ...stageOf(alone.events, "done").counters, elapsedMs: 0 });
        expect(r.question).toBe(items[r.index]!.request!.question);
      }
    } finally {
      client.close();
    }
    // The baseline item has no attribution; the others do.
    expect(results.find((r) => r.itemId === "variant-2")!.attribution).toBeUndefined();
    expect(results.find((r) => r.itemId === "q-1")!.attribution!.rows.length).toBeGreaterThan(0);

    // A reader that dropped after 4 results resumes with the 5th.
    const rest = await batches.results("six", 4);
    expect(rest.results).toEqual(results.slice(4));
    expect(runtime.generator.sequencesInUse()).toBe(0);
  });

  it("batches - CreateBatch is idempotent by batch_id: the same items return the batch, other items or another label are ALREADY_EXISTS", async () => {
    const items = [{ itemId: "a", request: AskRequest.fromPartial({ question: QUESTIONS[0]!, generation: { maxTokens: 4 } }) }];
    const first = await batches.create({ batchId: "idem-1", items });
    expect(first.created).toBe(true);
    const again = await batches.create({ batchId: "idem-1", items: [{ itemId: "a", request: AskRequest.fromPartial({ question: QUESTIONS[0]!, generation: { maxTokens: 4 } }) }] });
    expect(again.created).toBe(false);
    expect(again.batch!.itemsSha256).toBe(first.batch!.itemsSha256);
    expect(again.batch!.createdUnixMs).toBe(first.batch!.createdUnixMs);
    const other = await batches.create({ batchId: "idem-1", items: [{ itemId: "a", request: AskRequest.fromPartial({ question: QUESTIONS[1]! }) }] }).catch((e: { code: number; details: string }) => e);
    expect(other).toMatchObject({ code: status.ALREADY_EXISTS });
    expect((other as { details: string }).details).toMatch(/batch idem-1 already exists with other items/);
    // The same items under another label are another batch by mistake, not a rename.
    const relabelled = await batches.create({ batchId: "idem-1", items, label: "renamed" }).catch((e: { code: number; details: string }) => e);
    expect(relabelled).toMatchObject({ code: status.ALREADY_EXISTS });
    expect((relabelled as { details: string }).details).toMatch(/batch idem-1 already exists with the label "", not "renamed"/);
    await batches.watch("idem-1");
    expect((await batches.list()).batches.filter((b) => b.batchId === "idem-1")).toHaveLength(1);
  });

  it("batches - malformed and impossible items end with their own status codes; every other item is answered", async () => {
    const good = (id: string, q: string) => ({ itemId: id, request: AskRequest.fromPartial({ question: q, generation: { maxTokens: 8 } }) });
    const items: BatchItem[] = [
      good("good-1", QUESTIONS[2]!),
      { itemId: "empty", request: AskRequest.fromPartial({ question: "   " }) },
      { itemId: "k0", request: AskRequest.fromPartial({ question: QUESTIONS[0]!, retrieval: { k: 0 } }) },
      { itemId: "method", request: AskRequest.fromPartial({ question: QUESTIONS[0]!, attribution: { method: 99 as AttributionMethod } }) },
      { itemId: "huge", request: AskRequest.fromPartial({ question: "why ".repeat(262_144) }) },
      { itemId: "no-request", request: undefined },
      good("good-2", QUESTIONS[3]!),
    ];
    await batches.create({ batchId: "malformed", items });
    const end = (await batches.watch("malformed")).batches.at(-1)!;
    expect(end.state).toBe(BatchState.BATCH_STATE_COMPLETED);
    expect(end.counts).toMatchObject({ succeeded: 2, failed: 5 });
    const byId = new Map((await batches.results("malformed")).results.map((r) => [r.itemId, r]));
    for (const id of ["good-1", "good-2"]) expect(byId.get(id)!.state).toBe(BatchItemState.BATCH_ITEM_STATE_SUCCEEDED);
    const failed = (id: string) => byId.get(id)!;
    for (const id of ["empty", "k0", "method", "huge", "no-request"]) {
      expect(failed(id).state, id).toBe(BatchItemState.BATCH_ITEM_STATE_FAILED);
      expect(failed(id).statusCode, id).toBe(status.INVALID_ARGUMENT);
    }
    expect(failed("empty").statusMessage).toMatch(/question is empty/);
    expect(failed("k0").statusMessage).toMatch(/retrieval\.k must be 1\.\.200, got 0/);
    expect(failed("method").statusMessage).toMatch(/method/);
    expect(failed("huge").statusMessage).toMatch(/question has 1048575 characters; the limit is 4000/);
    expect(failed("huge").question.length).toBe(1_048_576);
  });

  it("batches - CancelBatch stops the running item, never starts the queued ones, keeps finished results and leaves no KV in use", async () => {
    const items = QUESTIONS.slice(0, 8).map((q, i) => ({ itemId: `c-${i}`, request: AskRequest.fromPartial({ question: q }) }));
    await batches.create({ batchId: "to-cancel", items });
    await until(async () => {
      const b = await batches.get("to-cancel");
      return b.counts!.succeeded >= 1 && b.counts!.running === 1 ? b : undefined;
    }, "one item finished and one running", 120_000, 100);
    const cancelled = await batches.cancel("to-cancel");
    expect([BatchState.BATCH_STATE_CANCELLING, BatchState.BATCH_STATE_CANCELLED]).toContain(cancelled.state);
    const end = (await batches.watch("to-cancel")).batches.at(-1)!;
    expect(end.state).toBe(BatchState.BATCH_STATE_CANCELLED);
    const { results } = await batches.results("to-cancel");
    expect(results).toHaveLength(8);
    const succeeded = results.filter((r) => r.state === BatchItemState.BATCH_ITEM_STATE_SUCCEEDED);
    const cancelledItems = results.filter((r) => r.state === BatchItemState.BATCH_ITEM_STATE_CANCELLED);
    expect(succeeded.length + cancelledItems.length).toBe(8);
    expect(succeeded.length).toBeGreaterThanOrEqual(1);
    expect(cancelledItems.every((r) => r.statusCode === status.CANCELLED)).toBe(true);
    // Exactly one was stopped mid-run (unless it finished in the instant before the cancel reached it).
    const stopped = cancelledItems.filter((r) => /while this item ran/.test(r.statusMessage));
    expect(stopped.length).toBeLessThanOrEqual(1);
    expect(cancelledItems.length - stopped.length).toBeGreaterThanOrEqual(8 - succeeded.length - 1);
    expect(end.counts!.cancelled).toBe(cancelledItems.length);
    expect(runtime.generator.sequencesInUse()).toBe(0);
    // Cancelling again changes nothing.
    expect((await batches.cancel("to-cancel")).counts).toEqual(end.counts);
  });

  it("batches - unknown ids are NOT_FOUND, bad ids INVALID_ARGUMENT, and ListBatches pages newest first", async () => {
    await expect(batches.get("no-such-batch")).rejects.toMatchObject({ code: status.NOT_FOUND });
    await expect(batches.get("bad id")).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    await expect(batches.create({ batchId: "x.y", items: [{ itemId: "a", request: AskRequest.fromPartial({ question: "q" }) }] })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    await expect(batches.create({ batchId: "empty-batch", items: [] })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    const dup = [
      { itemId: "same", request: AskRequest.fromPartial({ question: "q1" }) },
      { itemId: "same", request: AskRequest.fromPartial({ question: "q2" }) },
    ];
    await expect(batches.create({ batchId: "dup-ids", items: dup })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: expect.stringMatching(/repeats items\[0\]/) });
    // Four batches of its own (cancelled at once: only their listing matters), whatever other tests created.
    const mine = ["page-1", "page-2", "page-3", "page-4"];
    for (const batchId of mine) {
      await batches.create({ batchId, items: [{ itemId: "only", request: AskRequest.fromPartial({ question: QUESTIONS[0]!, generation: { maxTokens: 1 } }) }] });
      await batches.cancel(batchId);
      await new Promise((r) => setTimeout(r, 5)); // distinct creation times
    }
    const all: Batch[] = [];
    let token = "";
    do {
      const page = await batches.list(2, token);
      expect(page.batches.length).toBeLessThanOrEqual(2);
      all.push(...page.batches);
      token = page.nextPageToken;
    } while (token !== "");
    const everything = (await batches.list(100)).batches;
    expect(all.map((b) => b.batchId)).toEqual(everything.map((b) => b.batchId));
    expect(everything.map((b) => b.batchId).filter((id) => mine.includes(id))).toEqual([...mine].reverse());
    const created = everything.map((b) => Number(b.createdUnixMs));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    await expect(batches.list(0, "not-a-token")).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
  });

  it("batches - while an interactive call runs, a batch item's engine jobs wait for it (embedded: one engine context)", async () => {
    const events: AskEvent[] = [];
    const leave = runtime.interactive.enter(); // what admitted() does for every Ask and Attribute
    const item = runAsk(runtime.batchPipeline, AskRequest.fromPartial({ question: QUESTIONS[5]!, generation: { maxTokens: 8 } }), (e) => events.push(e), new AbortController().signal);
    await until(async () => (events.some((e) => e.stage?.$case === "reranked") ? true : undefined), "retrieval and re-rank of the batch item", 120_000, 100);
    await new Promise((r) => setTimeout(r, 1_500));
    // Retrieval and re-ranking ran; the engine's first job (A_full) did not start while the gate was held.
    expect(events.map((e) => e.stage!.$case)).toEqual(["retrieved", "aligned", "reranked"]);
    expect(runtime.generator.sequencesInUse()).toBe(0);
    leave();
    await item;
    expect(events.at(-1)!.stage!.$case).toBe("done");
    // An interactive Ask itself never waits at the gate.
    const interactive = runtime.interactive.enter();
    const alone: AskEvent[] = [];
    await runAsk(runtime, AskRequest.fromPartial({ question: QUESTIONS[5]!, generation: { maxTokens: 8 } }), (e) => alone.push(e), new AbortController().signal);
    interactive();
    expect(alone.at(-1)!.stage!.$case).toBe("done");
  });

  it("batches - buf curl (a strict reflection client) creates a batch, reads it and streams its results", async () => {
    const request = JSON.stringify({ batchId: "from-buf", items: [{ itemId: "one", request: { question: QUESTIONS[4], generation: { maxTokens: 6 } } }] });
    const created = JSON.parse(await bufCurl("-d", request, `http://${server.address}/attr_rag.v1.BatchService/CreateBatch`)) as { batch: { batchId: string; totalItems: number }; created: boolean };
    expect(created).toMatchObject({ batch: { batchId: "from-buf", totalItems: 1 }, created: true });
    const watched = jsonMessages(await bufCurl("-d", '{"batchId":"from-buf"}', `http://${server.address}/attr_rag.v1.BatchService/WatchBatch`)) as { batch: { state: string } }[];
    expect(watched.at(-1)!.batch.state).toBe("BATCH_STATE_COMPLETED");
    const results = jsonMessages(await bufCurl("-d", '{"batchId":"from-buf"}', `http://${server.address}/attr_rag.v1.BatchService/ListBatchResults`)) as { result: { itemId: string; state: string; finalAnswer: { text: string } } }[];
    expect(results).toHaveLength(1);
    expect(results[0]!.result).toMatchObject({ itemId: "one", state: "BATCH_ITEM_STATE_SUCCEEDED" });
    expect(results[0]!.result.finalAnswer.text.length).toBeGreaterThan(0);
    const methods = await bufCurl("--list-methods", `http://${server.address}`);
    for (const m of ["CreateBatch", "GetBatch", "ListBatches", "WatchBatch", "ListBatchResults", "CancelBatch"]) expect(methods).toContain(`attr_rag.v1.BatchService/${m}`);
  });
});
