import { request as httpRequest } from "node:http";
import { AskRequest, AttributeRequest, AttributeResponse, AttrRagServiceClient, Baseline, SelectionDecision } from "@attr-rag/contracts";
import { Metadata, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime, startGatewayServer, type GatewayServerHandle } from "../src/index.js";
import { curl, envelope, envelopeBytes, unenvelope } from "./helpers/curl.js";
import { buildDemoStore, QUESTION, testConfig } from "./helpers/demoStore.js";
import { askStream, attrRagClient, stageOrder } from "./helpers/grpcClients.js";
import { healthCheck } from "./helpers/probes.js";
import { until } from "./helpers/until.js";

const TOKEN = "http-test-token";
const AUTH = { authorization: `Bearer ${TOKEN}` };
const JSON_HEADERS = { ...AUTH, "content-type": "application/json" };
const STREAM_HEADERS = { ...AUTH, "content-type": "application/connect+json" };
const MAX_BODY = 4 * 1024 * 1024;

const SETS = [
  { setId: "a", text: "Dissolve 3 g of p-aminophenol in 10 mL of water and add 4 mL of acetic anhydride." },
  { setId: "b", text: "Heat the mixture on a water bath for 10 minutes, then cool it in ice." },
  { setId: "c", text: "Collect the crystals by suction filtration and recrystallise them from water." },
];
const attributeJson = { question: QUESTION, sets: SETS, generation: { maxTokens: 8 } };
const askJson = { question: QUESTION, retrieval: { k: 3 }, generation: { maxTokens: 6 } };

function grpcAttribute(client: AttrRagServiceClient, request: AttributeRequest): Promise<AttributeResponse> {
  const metadata = new Metadata();
  metadata.set("authorization", `Bearer ${TOKEN}`);
  return new Promise((resolve, reject) => client.attribute(request, metadata, (err, res) => (err ? reject(err) : resolve(res))));
}

const json = (body: Buffer) => JSON.parse(body.toString("utf8")) as Record<string, any>;
const STAGES = ["retrieved", "aligned", "reranked", "initialAnswerDelta", "occlusionProgress", "attribution", "selection", "gapFill", "finalAnswerDelta", "finalAnswer", "done"];
const stageOf = (message: Record<string, unknown>) => Object.keys((message.event ?? {}) as object).find((k) => STAGES.includes(k))!;

describe("gateway HTTP/JSON face (Connect protocol)", () => {
  let store: Awaited<ReturnType<typeof buildDemoStore>>;
  let runtime: Runtime;
  let server: GatewayServerHandle;
  let base: string;
  let client: AttrRagServiceClient;

  beforeAll(async () => {
    store = await buildDemoStore();
    runtime = await Runtime.open(testConfig(store.dir, { authToken: TOKEN, maxMessageBytes: MAX_BODY }));
    server = await startGatewayServer({ runtime, httpPort: 0, log: () => {} });
    base = `http://${server.http!.address}`;
    client = attrRagClient(server.address);
  });

  afterAll(async () => {
    client?.close();
    await server?.close();
    store?.remove();
  });

  it("http - Attribute from curl with JSON gives the gRPC port's answer, α rows and decisions", async () => {
    const reply = await curl(`${base}/attr_rag.v1.AttrRagService/Attribute`, { body: JSON.stringify(attributeJson), headers: JSON_HEADERS });
    expect(reply.status).toBe(200);
    expect(reply.contentType).toContain("application/json");
    const viaHttp = json(reply.body);
    const viaGrpc = AttributeResponse.toJSON(await grpcAttribute(client, AttributeRequest.fromJSON(attributeJson))) as Record<string, any>;
    expect(viaHttp.initialAnswer).toBe(viaGrpc.initialAnswer);
    expect(viaHttp.attribution.rows.map((r: { setId: string }) => r.setId)).toEqual(["a", "b", "c"]);
    expect(viaHttp.attribution.rows).toEqual(viaGrpc.attribution.rows);
    // Enums by name, as the proto3 JSON mapping writes them.
    const decisions = viaHttp.selection.sets.map((s: { decision: string }) => s.decision);
    expect(decisions).toEqual(viaGrpc.selection.sets.map((s: { decision: string }) => s.decision));
    expect(decisions.every((d: string) => d in SelectionDecision)).toBe(true);
  });

  it("http - a streaming Ask over Connect streaming: one message per stage event, in the gRPC stream's order", async () => {
    const reply = await curl(`${base}/attr_rag.v1.AttrRagService/Ask`, { body: envelope(askJson), headers: STREAM_HEADERS });
    expect(reply.status).toBe(200);
    expect(reply.contentType).toBe("application/connect+json");
    const { messages, end } = unenvelope(reply.body);
    expect(end).toEqual({});
    const grpc = await askStream(client, AskRequest.fromJSON(askJson), { token: TOKEN });
    expect(grpc.error).toBeUndefined();
    const collapse = (s: string[]) => s.filter((x, i) => i === 0 || s[i - 1] !== x);
    expect(collapse(messages.map(stageOf))).toEqual(stageOrder(grpc.events));
    expect(collapse(messages.map(stageOf)).slice(0, 4)).toEqual(["retrieved", "aligned", "reranked", "initialAnswerDelta"]);
    const final = messages.find((m) => stageOf(m) === "finalAnswer")!.event as { finalAnswer: { text: string } };
    const grpcFinal = grpc.events.find((e) => e.stage?.$case === "finalAnswer")!.stage!.value as { text: string };
    expect(final.finalAnswer.text).toBe(grpcFinal.text);
    expect(runtime.generator.sequencesInUse()).toBe(0);
  });

  it("http - bad requests get Connect error bodies with the gRPC code name, never a stack trace", async () => {
    const attribute = `${base}/attr_rag.v1.AttrRagService/Attribute`;
    const wrongType = await curl(attribute, { body: JSON.stringify({ question: 5, sets: SETS }), headers: JSON_HEADERS });
    expect(wrongType.status).toBe(400);
    expect(json(wrongType.body)).toMatchObject({ code: "invalid_argument" });
    expect(json(wrongType.body).message).toContain("question");
    const unknownField = await curl(attribute, { body: JSON.stringify({ question: QUESTION, setz: [] }), headers: JSON_HEADERS });
    expect(json(unknownField.body)).toMatchObject({ code: "invalid_argument" });
    expect(json(unknownField.body).message).toContain("setz");
    const notJson = await curl(attribute, { body: "{question:", headers: JSON_HEADERS });
    expect(json(notJson.body).code).toBe("invalid_argument");
    // Valid JSON the pipeline refuses: its own message, through the same status mapping as gRPC.
    const noSets = await curl(attribute, { body: JSON.stringify({ question: QUESTION }), headers: JSON_HEADERS });
    expect(json(noSets.body).code).toBe("invalid_argument");

    const huge = await curl(attribute, { body: JSON.stringify({ question: "x".repeat(MAX_BODY + 10), sets: SETS }), headers: JSON_HEADERS });
    expect(json(huge.body).code).toBe("resource_exhausted");

    const noToken = await curl(attribute, { body: JSON.stringify(attributeJson), headers: { "content-type": "application/json" } });
    expect(noToken.status).toBe(401);
    expect(json(noToken.body)).toMatchObject({ code: "unauthenticated" });
    const wrongToken = await curl(`${base}/attr_rag.v1.IndexService/GetStats`, { body: "{}", headers: { "content-type": "application/json", authorization: "Bearer nope" } });
    expect(json(wrongToken.body)).toMatchObject({ code: "unauthenticated", message: "invalid bearer token" });

    const unknownRoute = await curl(`${base}/attr_rag.v1.AttrRagService/Nope`, { body: "{}", headers: JSON_HEADERS });
    expect(unknownRoute.status).toBe(404);
    expect(json(unknownRoute.body).code).toBe("not_found");
    const getRpc = await curl(attribute, { method: "GET", headers: AUTH });
    expect(getRpc.status).toBeGreaterThanOrEqual(400);

    for (const r of [wrongType, unknownField, notJson, noSets, huge, noToken, wrongToken, unknownRoute]) {
      expect(r.body.toString()).not.toMatch(/\n\s+at /);
      expect(r.body.toString()).not.toContain("node_modules");
    }
  });

  it("http - IndexService and health answer over HTTP/JSON too", async () => {
    const stats = await curl(`${base}/attr_rag.v1.IndexService/GetStats`, { body: "{}", headers: JSON_HEADERS });
    expect(json(stats.body).documents).toBe(32);
    const search = await curl(`${base}/attr_rag.v1.IndexService/Search`, { body: JSON.stringify({ query: "acetic anhydride", options: { k: 3 } }), headers: JSON_HEADERS });
    expect(json(search.body).chunks, search.body.toString()).toHaveLength(3);
    const health = await curl(`${base}/grpc.health.v1.Health/Check`, { body: "{}", headers: { "content-type": "application/json" } });
    expect(json(health.body)).toEqual({ status: "SERVING" });
    // Embedded, the cluster is the gateway's own engine context, reported as one worker with its counters.
    const cluster = json((await curl(`${base}/attr_rag.v1.ClusterService/GetCluster`, { body: "{}", headers: JSON_HEADERS })).body);
    expect(cluster.mode).toBe("embedded");
    expect(cluster.workers).toHaveLength(1);
    expect(cluster.workers[0]).toMatchObject({ workerId: "embedded", slots: 1, sequences: 4 });
    expect(Number(cluster.workers[0].decodeCalls)).toBe(runtime.generator.schedulerStats().decodeCalls);
    expect(cluster.workers[0].sequencesInUse ?? 0).toBe(0);
    const noToken = await curl(`${base}/attr_rag.v1.ClusterService/GetCluster`, { body: "{}", headers: { "content-type": "application/json" } });
    expect(json(noToken.body).code).toBe("unauthenticated");
  });

  it("http - batches over HTTP/JSON: CreateBatch, then WatchBatch streams until the batch completes", async () => {
    const create = await curl(`${base}/attr_rag.v1.BatchService/CreateBatch`, {
      body: JSON.stringify({ batchId: "http-batch", label: "over http", items: [{ itemId: "one", request: { question: QUESTION, retrieval: { k: 2 }, generation: { maxTokens: 4 } } }] }),
      headers: JSON_HEADERS,
    });
    expect(create.status, create.body.toString()).toBe(200);
    expect(json(create.body).batch).toMatchObject({ batchId: "http-batch", totalItems: 1 });
    const watch = await curl(`${base}/attr_rag.v1.BatchService/WatchBatch`, { body: envelope({ batchId: "http-batch" }), headers: STREAM_HEADERS });
    const { messages, end } = unenvelope(watch.body);
    expect(end).toEqual({});
    expect(messages.length).toBeGreaterThan(0);
    expect((messages.at(-1)!.batch as { state: string }).state).toBe("BATCH_STATE_COMPLETED");
    const again = await curl(`${base}/attr_rag.v1.BatchService/CreateBatch`, { body: JSON.stringify({ batchId: "http-batch", items: [{ itemId: "other", request: { question: "q" } }] }), headers: JSON_HEADERS });
    expect([again.status, json(again.body).code]).toEqual([409, "already_exists"]);
  });

  it("http - Connect-Timeout-Ms ends an Ask with deadline_exceeded and frees the engine", async () => {
    const reply = await curl(`${base}/attr_rag.v1.AttrRagService/Ask`, {
      body: envelope({ ...askJson, generation: { maxTokens: 64 } }),
      headers: { ...STREAM_HEADERS, "connect-timeout-ms": "1500" },
    });
    const { end } = unenvelope(reply.body);
    expect(end?.error?.code).toBe("deadline_exceeded");
    await until(() => runtime.generator.sequencesInUse() === 0, "the timed-out ask to free its KV sequences");
    await until(() => server.stopped.recent().at(-1)?.code === status.DEADLINE_EXCEEDED, "the server to record the stopped ask");
    expect(server.stopped.recent().at(-1)).toMatchObject({ rpc: "Ask", stopped: true });
  });

  it("http - a client that drops the stream mid-occlusion cancels the job: 0 KV sequences in use after", async () => {
    const body = envelope({ ...askJson, retrieval: { k: 4 }, generation: { maxTokens: 24 } });
    // The same Ask run to its end, for the time a cancel that did not reach the engine would take.
    const soloStart = performance.now();
    const solo = await curl(`${base}/attr_rag.v1.AttrRagService/Ask`, { body, headers: STREAM_HEADERS });
    const soloMs = performance.now() - soloStart;
    expect(unenvelope(solo.body).messages.map(stageOf)).toContain("done");
    const stoppedBefore = server.stopped.count;
    const stagesSeen: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${base}/attr_rag.v1.AttrRagService/Ask`, { method: "POST", headers: { ...STREAM_HEADERS, "content-length": body.length } }, (res) => {
        let buffered = Buffer.alloc(0);
        res.on("data", (chunk: Buffer) => {
          buffered = Buffer.concat([buffered, chunk]);
          for (;;) {
            if (buffered.length < 5) break;
            const length = buffered.readUInt32BE(1);
            if (buffered.length < 5 + length) break;
            stagesSeen.push(stageOf(JSON.parse(buffered.subarray(5, 5 + length).toString())));
            buffered = buffered.subarray(5 + length);
          }
          if (stagesSeen.includes("occlusionProgress")) {
            req.destroy();
            resolve();
          }
        });
        res.on("end", () => reject(new Error(`the stream ended before occlusion progress: ${stagesSeen.join(",")}`)));
      });
      req.on("error", (err) => (stagesSeen.includes("occlusionProgress") ? resolve() : reject(err)));
      req.end(body);
    });
    expect(stagesSeen).not.toContain("attribution");
    await until(() => runtime.generator.sequencesInUse() === 0 && server.admission.running === 0, "the dropped stream to free its slot and KV sequences");
    expect(runtime.generator.sequencesInUse()).toBe(0);
    // The server's side: the job was cancelled (its work threw, it did not run on to its end), well before the
    // solo run's time was up.
    expect(server.stopped.count).toBe(stoppedBefore + 1);
    const stop = server.stopped.recent().at(-1)!;
    expect(stop).toMatchObject({ rpc: "Ask", code: status.CANCELLED, stopped: true });
    expect(stop.stopMs, `stopped ${stop.stopMs} ms after the drop; the whole Ask takes ${soloMs} ms`).toBeLessThan(soloMs / 2);
    expect(server.stopped.ranToEnd).toBe(0);
  });

  it("http - CORS is closed unless configured; unknown paths are 404 with a JSON body", async () => {
    const preflight = await curl(`${base}/attr_rag.v1.AttrRagService/Attribute`, { method: "OPTIONS", headers: { origin: "https://elsewhere.example", "access-control-request-method": "POST" } });
    expect(preflight.status).toBe(403);
    const page = await curl(`${base}/no/such/page`, { method: "GET" });
    expect(page.status).toBe(404);
    expect(json(page.body).code).toBe("not_found");
  });

  it("http - 200 fuzzed requests: every error has a JSON body, nothing crashes, health stays SERVING", async () => {
    const paths = ["/attr_rag.v1.AttrRagService/Attribute", "/attr_rag.v1.AttrRagService/Ask", "/attr_rag.v1.IndexService/Search", "/attr_rag.v1.BatchService/GetBatch", "/attr_rag.v1.IndexService/GetChunks"];
    const bodies = fuzzBodies(200);
    const statuses = new Map<number, number>();
    let dropped = 0;
    for (let i = 0; i < bodies.length; i++) {
      const [path, streaming] = [paths[i % paths.length]!, i % paths.length === 1];
      const fuzz = bodies[i]!;
      const headers = streaming ? STREAM_HEADERS : JSON_HEADERS;
      const reply = await rawPost(`${base}${path}`, streaming && i % 3 === 0 ? fuzz.subarray(0, Math.max(0, fuzz.length - 3)) : streaming ? envelopeBytes(fuzz) : fuzz, headers, i % 7 === 0 ? 300 : 10_000);
      if (reply === "dropped") {
        dropped++;
        continue;
      }
      statuses.set(reply.status, (statuses.get(reply.status) ?? 0) + 1);
      if (reply.status >= 500) expect(() => JSON.parse(reply.body)).not.toThrow();
      expect(reply.status).not.toBe(500);
      expect(reply.body).not.toMatch(/\n\s+at /);
    }
    expect([...statuses.keys()].some((s) => s >= 400)).toBe(true);
    expect(dropped).toBeLessThan(60);
    await until(() => server.admission.running === 0 && runtime.generator.sequencesInUse() === 0, "every fuzzed request to release its slot and KV sequences", 60_000);
    expect(await healthCheck(server.address, "")).toBe("SERVING");
    const after = await curl(`${base}/grpc.health.v1.Health/Check`, { body: "{}", headers: { "content-type": "application/json" } });
    expect(json(after.body)).toEqual({ status: "SERVING" });
  });
});

/** Deterministic garbage: broken JSON, wrong types, huge and deep fields, unknown fields, nulls, binary. */
function fuzzBodies(n: number): Buffer[] {
  let seed = 20261125;
  const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const values = [null, true, -1, 1e308, "x", "", [], {}, "🧪".repeat(50), "\u0000", -0, 2 ** 53 + 1, [1, "a"], { a: { b: { c: [] } } }];
  const fields = ["question", "sets", "generation", "retrieval", "k", "setId", "batchId", "query", "chunkIds", "attribution", "selection", "maxTokens", "baseline", "strategy"];
  const out: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const kind = i % 8;
    if (kind === 0) out.push(Buffer.from(JSON.stringify({ question: QUESTION, sets: [{ text: "t" }] }).slice(0, Math.floor(rand() * 40))));
    else if (kind === 1) out.push(Buffer.from(Array.from({ length: 64 }, () => Math.floor(rand() * 256))));
    else if (kind === 2) out.push(Buffer.from(JSON.stringify({ [pick(fields)]: pick(values), [pick(fields)]: pick(values) })));
    else if (kind === 3) out.push(Buffer.from(JSON.stringify({ question: "q".repeat(Math.floor(rand() * 300_000)) })));
    else if (kind === 4) out.push(Buffer.from("[".repeat(5000) + "]".repeat(5000)));
    else if (kind === 5) out.push(Buffer.from(JSON.stringify({ question: QUESTION, generation: { maxTokens: pick([-5, 1e9, "many", 0.5]) }, sets: [{ text: "a" }] })));
    else if (kind === 6) out.push(Buffer.from(JSON.stringify(pick(values))));
    else out.push(Buffer.from(JSON.stringify({ query: pick(values), k: pick(values), batchId: pick(values), chunkIds: pick(values) })));
  }
  return out;
}

/** A POST with node's bare http client; "dropped" when the fuzzer closed the connection early on purpose. */
function rawPost(url: string, body: Buffer, headers: Record<string, string>, dropAfterMs: number): Promise<{ status: number; body: string } | "dropped"> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { ...headers, "content-length": body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() });
      });
      res.on("error", () => resolve("dropped"));
    });
    const timer = setTimeout(() => {
      req.destroy();
      resolve("dropped");
    }, dropAfterMs);
    // The server may answer early (a refused body) and close before it has read everything we send.
    req.on("error", (err: NodeJS.ErrnoException) => (req.destroyed || err.code === "ECONNRESET" || err.code === "EPIPE" ? resolve("dropped") : reject(err)));
    req.end(body);
  });
}
