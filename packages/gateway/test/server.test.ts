import { credentials, status, type Client } from "@grpc/grpc-js";
import {
  AskRequest,
  AskResponse,
  AttributeRequest,
  AttrRagServiceService,
  AttributionMethod,
  BatchServiceService,
  ClusterServiceService,
  Baseline,
  EngineStrategy,
  FinishReason,
  SelectionStrategy,
  IndexServiceClient,
  IndexServiceService,
  RetrievalMode,
  SearchRequest,
  SearchResponse,
  type AskEventOf,
  type AttributeResponse,
  type AttrRagServiceClient,
} from "@attr-rag/contracts";
import { ATTRIBUTION_METRICS, selectChunkSets } from "@attr-rag/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FALLBACK_RERANKER, Runtime, startGatewayServer, type GatewayServerHandle } from "../src/index.js";
import { buildDemoStore, QUESTION, testConfig } from "./helpers/demoStore.js";
import { askStream, attrRagClient, stageOrder } from "./helpers/grpcClients.js";
import { healthCheck } from "./helpers/probes.js";
import { bufCurl, jsonMessages } from "./helpers/bufCurl.js";
import { until } from "./helpers/until.js";

const ATTR_RAG_ORDER = ["retrieved", "aligned", "reranked", "initialAnswerDelta", "occlusionProgress", "attribution", "selection", "gapFill", "finalAnswerDelta", "finalAnswer", "done"];

/** The payload of the first event of one stage. */
function stage<C extends "retrieved" | "aligned" | "reranked" | "attribution" | "selection" | "gapFill" | "finalAnswer" | "done">(
  events: readonly { stage?: { $case: string; value: unknown } | undefined }[],
  c: C,
): AskEventOf<C> {
  const hit = events.find((e) => e.stage?.$case === c);
  if (hit === undefined) throw new Error(`no ${c} event`);
  return hit.stage!.value as AskEventOf<C>;
}

function attribute(client: AttrRagServiceClient, request: AttributeRequest): Promise<AttributeResponse> {
  return new Promise((resolve, reject) => client.attribute(request, (err, res) => (err ? reject(err) : resolve(res))));
}

describe("gateway server", () => {
  let store: Awaited<ReturnType<typeof buildDemoStore>>;
  let runtime: Runtime;
  let server: GatewayServerHandle;
  let client: AttrRagServiceClient;
  const logs: string[] = [];

  beforeAll(async () => {
    store = await buildDemoStore();
    runtime = await Runtime.open(testConfig(store.dir, { maxConcurrentAsks: 1, maxQueuedAsks: 3 }));
    server = await startGatewayServer({ runtime, log: (line) => logs.push(line) });
    client = attrRagClient(server.address);
  });

  afterAll(async () => {
    client?.close();
    await server?.close();
    store?.remove();
  });

  it("gateway - Ask streams every stage in order and the final answer cites only selected chunks", async () => {
    const { events, error } = await askStream(client, AskRequest.fromPartial({ question: QUESTION, includeOccludedAnswers: true }));
    expect(error).toBeUndefined();
    expect(stageOrder(events)).toEqual(ATTR_RAG_ORDER);
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i));
    expect(new Set(events.map((e) => e.requestId)).size).toBe(1);
    for (let i = 1; i < events.length; i++) expect(events[i]!.elapsedMs).toBeGreaterThanOrEqual(events[i - 1]!.elapsedMs);

    expect(stage(events, "retrieved").chunks).toHaveLength(6);
    const aligned = stage(events, "aligned");
    const reranked = stage(events, "reranked");
    expect(reranked.reranker).toBe(FALLBACK_RERANKER);
    expect(reranked.fallback).toBe(true);
    expect(reranked.sets.map((s) => s.setId).sort()).toEqual(aligned.sets.map((s) => s.setId).sort());

    const attribution = stage(events, "attribution");
    const selection = stage(events, "selection");
    expect(attribution.rows.map((r) => r.setId)).toEqual(reranked.sets.map((s) => s.setId));
    expect(attribution.metrics).toHaveLength(6);
    // The selection follows from the α table: the core's elbow on the same numbers keeps the same sets.
    const alphas = Object.fromEntries(ATTRIBUTION_METRICS.map((m, k) => [m, attribution.rows.map((r) => r.scores[k]!.alpha)]));
    const again = selectChunkSets({ sets: attribution.rows.map((r) => ({ id: r.setId })), metrics: ATTRIBUTION_METRICS, alphas });
    // Kept sets are listed in re-rank order, S* among them.
    expect(selection.selectedSetIds).toEqual([...again.kept].sort((x, y) => x - y).map((i) => attribution.rows[i]!.setId));
    expect(selection.selectedSetIds).toContain(selection.bestSetId);
    expect(selection.sets.every((s) => s.reasonText.length > 0)).toBe(true);

    // Final context = chunks of the selected sets plus the gap fill, nothing else; citations point inside it.
    const selectedChunks = aligned.sets.filter((s) => selection.selectedSetIds.includes(s.setId)).flatMap((s) => s.chunks.map((c) => c.chunkId));
    const added = stage(events, "gapFill").addedChunks.map((c) => c.id);
    const final = stage(events, "finalAnswer");
    expect([...final.contextChunkIds].sort()).toEqual([...selectedChunks, ...added].sort());
    for (const c of final.citations) for (const id of c.chunkIds) expect(final.contextChunkIds).toContain(id);
    const finalDeltas = events.flatMap((e) => (e.stage?.$case === "finalAnswerDelta" ? [e.stage.value] : []));
    expect(finalDeltas.map((d) => d.text).join("")).toBe(final.text);
    // Only the last delta of each answer says why it stopped (24 tokens of a story model: the length limit).
    const initialDeltas = events.flatMap((e) => (e.stage?.$case === "initialAnswerDelta" ? [e.stage.value] : []));
    for (const deltas of [initialDeltas, finalDeltas]) {
      expect(deltas.slice(0, -1).every((d) => d.finishReason === FinishReason.FINISH_REASON_UNSPECIFIED)).toBe(true);
      expect(deltas.at(-1)!.finishReason).toBe(FinishReason.FINISH_REASON_LENGTH);
    }

    const progress = events.flatMap((e) => (e.stage?.$case === "occlusionProgress" ? [e.stage.value] : []));
    // While the engine runs, progress counts finished generations; the last message carries every outcome.
    expect(progress.slice(0, -1).map((p) => p.done)).toEqual(progress.slice(0, -1).map((_, i) => i + 1));
    expect(progress.slice(0, -1).every((p) => p.finished.length === 0)).toBe(true);
    const summary = progress.at(-1)!;
    expect(summary.done).toBe(attribution.rows.length);
    expect(summary.finished.map((f) => f.setId)).toEqual(attribution.rows.map((r) => r.setId));
    expect(summary.finished.every((f) => f.answerText !== undefined)).toBe(true);

    const done = stage(events, "done");
    expect(done.warnings.some((w) => w.includes("fallback:bi-encoder"))).toBe(true);
    expect(done.occlusionCounters!.sequences).toBe(attribution.rows.length + 1);
    expect(done.counters!.tokensEvaluated).toBeGreaterThan(done.occlusionCounters!.tokensEvaluated);
    expect(runtime.generator.sequencesInUse()).toBe(0);
  });

  it("gateway - baselines answer from the top-k or re-ranked top-k chunks with the documented stages", async () => {
    const topk = await askStream(client, AskRequest.fromPartial({ question: QUESTION, baseline: { baseline: Baseline.BASELINE_TOPK, k: 3 } }));
    expect(topk.error).toBeUndefined();
    expect(stageOrder(topk.events).filter((s) => s !== "finalAnswerDelta")).toEqual(["retrieved", "finalAnswer", "done"]);
    const retrieved = stage(topk.events, "retrieved").chunks.map((c) => c.chunk!.id);
    expect(retrieved).toHaveLength(3);
    expect(stage(topk.events, "finalAnswer").contextChunkIds).toEqual(retrieved);

    const rerank = await askStream(client, AskRequest.fromPartial({ question: QUESTION, baseline: { baseline: Baseline.BASELINE_RERANK, k: 2 } }));
    expect(rerank.error).toBeUndefined();
    expect(stageOrder(rerank.events).filter((s) => s !== "finalAnswerDelta")).toEqual(["retrieved", "reranked", "finalAnswer", "done"]);
    const order = stage(rerank.events, "reranked");
    expect(order.sets).toHaveLength(6);
    expect(order.sets.map((s) => s.score)).toEqual([...order.sets.map((s) => s.score)].sort((a, b) => b - a));
    expect(stage(rerank.events, "finalAnswer").contextChunkIds).toEqual(order.sets.slice(0, 2).map((s) => s.setId));
  });

  it("gateway - Attribute attributes caller-supplied sets, with a given or generated initial answer", async () => {
    const sets = [
      { setId: "a", text: "Weigh 2.00 g of p-aminophenol into a dry 50 mL Erlenmeyer flask.", chunkIds: [] },
      { setId: "b", text: "Add 2.2 mL of acetic anhydride in the fume hood while swirling.", chunkIds: [] },
      { setId: "c", text: "Once upon a time a little dog played in the park with a red ball.", chunkIds: [] },
    ];
    const generated = await attribute(client, AttributeRequest.fromPartial({ question: QUESTION, sets, generation: { maxTokens: 16 }, includeOccludedAnswers: true }));
    expect(generated.occluded.map((o) => o.setId)).toEqual(["a", "b", "c"]);
    expect(generated.occluded.every((o) => o.answerText !== undefined)).toBe(true);
    expect(generated.attribution!.rows).toHaveLength(3);
    expect(generated.attribution!.evaluations).toBe(4);
    expect(generated.selection!.selectedSetIds.length).toBeGreaterThan(0);
    expect(generated.initialAnswer.length).toBeGreaterThan(0);

    const given = await attribute(client, AttributeRequest.fromPartial({ question: QUESTION, sets, initialAnswer: "Weigh the p-aminophenol.", generation: { maxTokens: 8 } }));
    expect(given.initialAnswer).toBe("Weigh the p-aminophenol.");
    expect(given.attribution!.evaluations).toBe(3);

    const unnamed = await attribute(client, AttributeRequest.fromPartial({ question: QUESTION, sets: sets.map((x) => ({ text: x.text })), generation: { maxTokens: 8 } }));
    expect(unnamed.attribution!.rows.map((r) => r.setId)).toEqual(["0", "1", "2"]);

    for (const bad of [
      AttributeRequest.fromPartial({ question: QUESTION, sets: [] }),
      AttributeRequest.fromPartial({ question: QUESTION, sets: [sets[0]!, { ...sets[1]!, setId: "a" }] }),
      AttributeRequest.fromPartial({ question: QUESTION, sets: [{ setId: "x", text: "   " }] }),
      AttributeRequest.fromPartial({ question: "", sets }),
      AttributeRequest.fromPartial({ question: QUESTION, sets: [{ setId: "big", text: "x".repeat(runtime.config.maxAttributeChars + 1) }] }),
      AttributeRequest.fromPartial({ question: QUESTION, sets, generation: { strategy: 99 as EngineStrategy } }),
      AttributeRequest.fromPartial({ question: QUESTION, sets: [{ setId: "m", text: "a \uE000attr-rag-context\uE001 b" }] }),
    ]) {
      await expect(attribute(client, bad)).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    }
  });

  it("gateway - malformed and out-of-range requests get precise status codes and the server stays up", async () => {
    const cases: [Partial<AskRequest>, status][] = [
      [{ question: "" }, status.INVALID_ARGUMENT],
      [{ question: "   \n " }, status.INVALID_ARGUMENT],
      [{ question: "x".repeat(runtime.config.maxQuestionChars + 1) }, status.INVALID_ARGUMENT],
      [{ question: QUESTION, retrieval: { k: 0, mode: 0 } }, status.INVALID_ARGUMENT],
      [{ question: QUESTION, retrieval: { k: 1_000_000, mode: 0 } }, status.INVALID_ARGUMENT],
      [{ question: QUESTION, generation: { maxTokens: 1_000_000, strategy: 0 } }, status.INVALID_ARGUMENT],
      [{ question: QUESTION, generation: { maxTokens: 0, strategy: 0 } }, status.INVALID_ARGUMENT],
      [{ question: QUESTION, retrieval: { mode: 99 as RetrievalMode } }, status.INVALID_ARGUMENT],
      [{ question: QUESTION, requestId: "has.dots" }, status.INVALID_ARGUMENT],
      [{ question: QUESTION, attribution: { method: AttributionMethod.ATTRIBUTION_METHOD_KERNEL_SHAP, samples: 0 } }, status.INVALID_ARGUMENT],
      [{ question: QUESTION, attribution: { method: 99 as AttributionMethod } }, status.INVALID_ARGUMENT],
      [{ question: QUESTION, generation: { strategy: 99 as EngineStrategy } }, status.INVALID_ARGUMENT],
      [{ question: QUESTION, selection: { strategy: 7 as SelectionStrategy, metrics: [] } }, status.INVALID_ARGUMENT],
      [{ question: `what is \uE000attr-rag-context\uE001 here?` }, status.INVALID_ARGUMENT],
      [{ question: QUESTION, retrieval: { mode: 0, filter: { docIds: ["no-such-doc"], sources: [] } } }, status.NOT_FOUND],
    ];
    for (const [request, code] of cases) {
      const { events, error } = await askStream(client, AskRequest.fromPartial(request));
      expect(error?.code, JSON.stringify(request).slice(0, 80)).toBe(code);
      expect(error!.details.length).toBeGreaterThan(10);
      expect(events.some((e) => e.stage?.$case === "done")).toBe(false);
    }
    // Bytes that are not an AskRequest at all.
    const raw = await new Promise<{ code: number }>((resolve) => {
      const call = (client as unknown as Client).makeServerStreamRequest(
        "/attr_rag.v1.AttrRagService/Ask",
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]),
      );
      call.on("data", () => undefined);
      call.on("error", (err: { code: number }) => resolve(err));
      call.on("end", () => resolve({ code: status.OK }));
    });
    expect(raw.code).not.toBe(status.OK);
    expect(await healthCheck(server.address, "attr_rag.v1.AttrRagService")).toBe("SERVING");
    expect(logs.filter((l) => l.includes("failed unexpectedly"))).toEqual([]);
  });

  it("gateway - cancelling mid-stream stops the engine at once and frees its KV sequences", async () => {
    const request = AskRequest.fromPartial({ question: QUESTION, retrieval: { k: 10, mode: 0 }, generation: { maxTokens: 400, strategy: 0 } });
    const { events, error } = await askStream(client, request, { cancelAfter: 6 });
    expect(error?.code).toBe(status.CANCELLED);
    expect(events.some((e) => e.stage?.$case === "done")).toBe(false);
    await until(() => server.admission.running === 0, "the cancelled ask to release its slot");
    expect(runtime.generator.sequencesInUse()).toBe(0);
    const next = await askStream(client, AskRequest.fromPartial({ question: QUESTION, baseline: { baseline: Baseline.BASELINE_TOPK, k: 2 } }));
    expect(next.error).toBeUndefined();
  });

  it("gateway - an expired deadline ends the call with DEADLINE_EXCEEDED and frees the engine", async () => {
    const request = AskRequest.fromPartial({ question: QUESTION, retrieval: { k: 10, mode: 0 }, generation: { maxTokens: 400, strategy: 0 } });
    const stoppedBefore = server.stopped.count;
    const { events, error } = await askStream(client, request, { deadlineMs: 2_500 });
    expect(error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(events.some((e) => e.stage?.$case === "done")).toBe(false);
    await until(() => server.admission.running === 0, "the expired ask to release its slot");
    expect(runtime.generator.sequencesInUse()).toBe(0);
    // The server's side: the work itself stopped at the deadline (it did not run on to its end unseen).
    expect(server.stopped.count).toBe(stoppedBefore + 1);
    expect(server.stopped.recent().at(-1)).toMatchObject({ rpc: "Ask", code: status.DEADLINE_EXCEEDED, stopped: true });
    expect(server.stopped.ranToEnd).toBe(0);
  });

  it("gateway - 32 concurrent asks against a queue of 3: the extra ones get RESOURCE_EXHAUSTED, the rest finish", async () => {
    const request = AskRequest.fromPartial({ question: QUESTION, retrieval: { k: 4, mode: 0 }, generation: { maxTokens: 6, strategy: 0 } });
    const asks = Array.from({ length: 32 }, () => askStream(client, request));
    // Bad requests sent while the queue is full still get their precise code, not RESOURCE_EXHAUSTED.
    const bad = await Promise.all(Array.from({ length: 3 }, () => askStream(client, AskRequest.fromPartial({ question: QUESTION, retrieval: { k: 0, mode: 0 } }))));
    expect(bad.map((o) => o.error?.code)).toEqual([status.INVALID_ARGUMENT, status.INVALID_ARGUMENT, status.INVALID_ARGUMENT]);
    const outcomes = await Promise.all(asks);
    const exhausted = outcomes.filter((o) => o.error?.code === status.RESOURCE_EXHAUSTED);
    const finished = outcomes.filter((o) => o.error === undefined && o.events.at(-1)?.stage?.$case === "done");
    // One running plus three queued are served; every other call is refused at once, not queued.
    expect(finished).toHaveLength(4);
    expect(exhausted).toHaveLength(28);
    expect(exhausted.every((o) => o.events.length === 0 && o.error!.details.includes("busy"))).toBe(true);
    expect(server.admission.running).toBe(0);
    expect(server.admission.queued).toBe(0);
    expect(runtime.generator.sequencesInUse()).toBe(0);
    expect(await healthCheck(server.address, "")).toBe("SERVING");
  });

  it("gateway - health and IndexService are served on the same port", async () => {
    for (const name of ["", "attr_rag.v1.AttrRagService", "attr_rag.v1.BatchService", "attr_rag.v1.IndexService"]) expect(await healthCheck(server.address, name)).toBe("SERVING");
    const index = new IndexServiceClient(server.address, credentials.createInsecure());
    const stats = await new Promise<{ documents: number; chunks: number }>((resolve, reject) => index.getStats({}, (err, res) => (err ? reject(err) : resolve(res))));
    index.close();
    expect(stats.documents).toBe(32);
    expect(stats.chunks).toBe(runtime.store.stats().chunks);
  });

  it("gateway - buf curl, knowing only reflection, lists every service and method and calls Search, Ask and Health", async () => {
    const url = `http://${server.address}`;
    expect((await bufCurl("--list-services", url)).trim().split("\n")).toEqual(["attr_rag.v1.AttrRagService", "attr_rag.v1.BatchService", "attr_rag.v1.ClusterService", "attr_rag.v1.IndexService", "grpc.health.v1.Health"]);
    const methods = [...Object.values(AttrRagServiceService), ...Object.values(BatchServiceService), ...Object.values(ClusterServiceService), ...Object.values(IndexServiceService)].map((m) => m.path.slice(1));
    const health = ["grpc.health.v1.Health/Check", "grpc.health.v1.Health/List", "grpc.health.v1.Health/Watch"];
    expect((await bufCurl("--list-methods", url)).trim().split("\n").sort()).toEqual([...methods, ...health].sort());
    expect(jsonMessages(await bufCurl("-d", '{"service":"attr_rag.v1.AttrRagService"}', `${url}/grpc.health.v1.Health/Check`))).toEqual([{ status: "SERVING" }]);
    const listed = jsonMessages(await bufCurl(`${url}/grpc.health.v1.Health/List`)) as [{ statuses: Record<string, { status: string }> }];
    expect(Object.keys(listed[0].statuses).sort()).toEqual(["", "attr_rag.v1.AttrRagService", "attr_rag.v1.BatchService", "attr_rag.v1.ClusterService", "attr_rag.v1.IndexService"]);

    // Search: the same hits as our own client gets.
    const query = { query: "How do I collect oxygen gas over water?", options: { k: 4, mode: "RETRIEVAL_MODE_BM25" } };
    const [viaBuf] = jsonMessages(await bufCurl("-d", JSON.stringify(query), `${url}/attr_rag.v1.IndexService/Search`)) as [unknown];
    const index = new IndexServiceClient(server.address, credentials.createInsecure());
    const ours = await new Promise<SearchResponse>((resolve, reject) => index.search(SearchRequest.fromJSON(query), (err, res) => (err ? reject(err) : resolve(res))));
    index.close();
    const searched = SearchResponse.fromJSON(viaBuf);
    expect(searched.chunks.map((c) => c.chunk!.id)).toEqual(ours.chunks.map((c) => c.chunk!.id));
    expect(searched.chunks[0]!.chunk!.docId).toBe("exp-02");
    expect(searched.chunks).toHaveLength(4);

    // Ask: the whole stream, stage by stage, and the same selection and α table as our client gets.
    const ask = { question: QUESTION, retrieval: { k: 4 }, generation: { maxTokens: 8 } };
    const streamed = jsonMessages(await bufCurl("-d", JSON.stringify(ask), `${url}/attr_rag.v1.AttrRagService/Ask`)).map((m) => AskResponse.fromJSON(m).event!);
    expect(stageOrder(streamed)).toEqual(ATTR_RAG_ORDER);
    expect(streamed.map((e) => e.sequence)).toEqual(streamed.map((_, i) => i));
    const { events, error } = await askStream(client, AskRequest.fromJSON(ask));
    expect(error).toBeUndefined();
    expect(stage(streamed, "selection").selectedSetIds).toEqual(stage(events, "selection").selectedSetIds);
    expect(stage(streamed, "attribution").rows).toEqual(stage(events, "attribution").rows);
    expect(stage(streamed, "finalAnswer").text).toBe(stage(events, "finalAnswer").text);
  });
});
