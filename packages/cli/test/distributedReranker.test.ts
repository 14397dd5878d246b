// Distributed mode at parity with embedded (issue 23): the GGUF cross-encoder runs as rerank jobs on workers
// (`attr-rag worker --reranker`), the gateway re-ranks through them (`serve --nats --reranker ID`), and the
// gateway's port serves IndexService by forwarding to the index over NATS. Real nats-server, one process per
// role. The tests share one cluster; none depends on another having run: the IndexService test ingests a
// document into the distributed store and deletes it again whatever happens (the parity tests compare with a
// copy of the store made before any test).
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials as grpcCredentials, status, type ServiceError as GrpcError } from "@grpc/grpc-js";
import {
  AskEvent,
  AskRequest,
  AttrRagServiceClient,
  EmbedTextsRequest,
  GetChunksRequest,
  RetrievalMode,
  SearchRequest,
  IndexServiceClient,
  IngestStatus,
  type AttributionTable,
  type GetChunksResponse,
  type GetStatsResponse,
  type IngestDocumentsRequest,
  type IngestDocumentsResponse,
  type SearchResponse,
} from "@attr-rag/contracts";
import { ensureSynthModel } from "@attr-rag/engine";
import { natsServerMissing } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalCluster } from "@attr-rag/cluster";
import { startCluster } from "./helpers/cluster.js";
import { ingestDemoCorpus, runCli, startServer, TEST_MODEL } from "./helpers/runCli.js";

const dir = mkdtempSync(join(tmpdir(), "attr-rag-distributed-reranker-"));
const storeDistributed = join(dir, "store-d");
const storeEmbedded = join(dir, "store-e");
const QUESTIONS = ["Explain all the required steps of the acetaminophen synthesis.", "How do I collect oxygen gas over water?"];
const ENGINE = ["--context-size", "16384", "--sequences", "4", "--threads", "1"];
const REQUEST = ["--k", "6", "--max-tokens", "24"];
const RERANKER_ID = "reranker-tiny";

const stages = (events: readonly AskEvent[]) => events.map((e) => e.stage!.$case).filter((s, i, all) => i === 0 || all[i - 1] !== s);
const first = <C extends string>(events: readonly AskEvent[], c: C) => events.find((e) => e.stage?.$case === c)?.stage?.value as never;
const parse = (out: string) => out.trim().split("\n").map((l) => AskEvent.fromJSON(JSON.parse(l)));
type Reranked = { sets: { setId: string; score: number; alignedIndex: number }[]; reranker: string; fallback: boolean };
type Done = { warnings: string[] };

function askStream(address: string, request: AskRequest, onEvent: (e: AskEvent) => void = () => {}): Promise<{ events: AskEvent[]; error?: GrpcError; endedAt: number }> {
  const client = new AttrRagServiceClient(address, grpcCredentials.createInsecure());
  const events: AskEvent[] = [];
  return new Promise((resolve) => {
    const call = client.ask(request);
    call.on("data", (r: { event: AskEvent }) => {
      events.push(r.event);
      onEvent(r.event);
    });
    call.on("error", (error: GrpcError) => {
      client.close();
      resolve({ events, error, endedAt: performance.now() });
    });
    call.on("end", () => {
      client.close();
      resolve({ events, endedAt: performance.now() });
    });
  });
}

/** Re-rank scores equal within 1e-6, the same sets in the same order, no fallback. */
function expectSameRanking(distributed: Reranked, embedded: Reranked): void {
  expect(distributed.fallback).toBe(false);
  expect(embedded.fallback).toBe(false);
  expect(distributed.sets.map((s) => s.setId)).toEqual(embedded.sets.map((s) => s.setId));
  distributed.sets.forEach((s, i) => expect(Math.abs(s.score - embedded.sets[i]!.score), s.setId).toBeLessThanOrEqual(1e-6));
}

/** A unary call of a generated client, bound to it, as a promise (requests as plain objects). */
const unary = <Res>(call: (req: never, cb: (err: GrpcError | null, res: Res) => void) => unknown, req: unknown): Promise<Res> =>
  new Promise((resolve, reject) => call(req as never, (err, res) => (err ? reject(err) : resolve(res))));

function ingest(client: IndexServiceClient, requests: readonly IngestDocumentsRequest[]): Promise<IngestDocumentsResponse> {
  return new Promise((resolve, reject) => {
    const stream = client.ingestDocuments((err, res) => (err ? reject(err) : resolve(res!)));
    for (const r of requests) stream.write(r);
    stream.end();
  });
}

async function failure(promise: Promise<unknown>): Promise<{ code: number; details: string }> {
  const err = (await promise.then(
    () => undefined,
    (e: unknown) => e,
  )) as GrpcError | undefined;
  expect(err, "the call should have failed").toBeDefined();
  return { code: err!.code, details: err!.details };
}

let cluster: LocalCluster;
let rerankerPath: string;
const missing = natsServerMissing();

beforeAll(async () => {
  if (missing !== undefined) return;
  const made = await ingestDemoCorpus(storeDistributed);
  expect(made.code, made.stderr).toBe(0);
  cpSync(storeDistributed, storeEmbedded, { recursive: true });
  // A synthetic bert cross-encoder with a classification head (models synth --preset reranker-tiny).
  rerankerPath = (await ensureSynthModel("reranker-tiny")).path;
  cluster = await startCluster({
    store: storeDistributed,
    workers: 1,
    engine: ENGINE,
    ackWaitSeconds: 2,
    maxDeliver: 3,
    gatewayArgs: REQUEST,
    reranker: { path: rerankerPath, id: RERANKER_ID, workers: 2 },
  });
}, 240_000);

afterAll(async () => {
  await cluster?.[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(missing !== undefined)(`distributed re-ranker and IndexService (real nats-server)${missing ? ` (skipped: ${missing})` : ""}`, () => {
  it("distributed reranker - the same re-rank scores (1e-6), selection, α table and final answer as embedded; no fallback", async () => {
    for (const question of QUESTIONS) {
      const remote = await runCli(["ask", question, "--server", cluster.gatewayAddress, "--json", ...REQUEST]);
      expect(remote.code, remote.stderr + cluster.logs()).toBe(0);
      const local = await runCli(["ask", question, "--json", "--store", storeEmbedded, "--model", TEST_MODEL, "--reranker", rerankerPath, ...ENGINE, ...REQUEST]);
      expect(local.code, local.stderr).toBe(0);
      const [d, e] = [parse(remote.stdout), parse(local.stdout)];
      expect(stages(d)).toEqual(stages(e));
      const [rd, re] = [first(d, "reranked") as Reranked, first(e, "reranked") as Reranked];
      expectSameRanking(rd, re);
      expect(rd.reranker).toBe(RERANKER_ID);
      expect(re.reranker).toMatch(/^gguf:bert-reranker-tiny/);
      for (const events of [d, e]) expect((first(events, "done") as Done).warnings.filter((w) => w.startsWith("re-ranker:"))).toEqual([]);
      const [ta, tb] = [first(d, "attribution") as AttributionTable, first(e, "attribution") as AttributionTable];
      expect(ta.rows.map((r) => r.setId)).toEqual(tb.rows.map((r) => r.setId));
      ta.rows.forEach((row, i) => row.scores.forEach((s, k) => expect(Math.abs(s.alpha - tb.rows[i]!.scores[k]!.alpha)).toBeLessThanOrEqual(1e-9)));
      expect(first(d, "selection")).toEqual(first(e, "selection"));
      expect(first(d, "finalAnswer")).toEqual(first(e, "finalAnswer"));
    }
    // Every rerank job ran on a re-rank worker, none on the generator's worker. A worker logs "finished" after
    // it publishes the result, and its stderr reaches us by another path than the answer: polled.
    await expect.poll(() => cluster.rerankers.some((w) => /finished rerank job/.test(w.stderr)), { timeout: 10_000, interval: 20 }).toBe(true);
    expect(cluster.workers.some((w) => /rerank job/.test(w.stderr))).toBe(false);
  });

  it("distributed reranker - a re-rank worker SIGKILLed mid-rerank: the job is redelivered to the other and the Ask completes with embedded's ranking", async () => {
    // k 20: a re-rank long enough (hundreds of ms on the tiny bert) to kill the worker while it runs.
    const request = AskRequest.fromPartial({ question: QUESTIONS[0], retrieval: { k: 20 }, generation: { maxTokens: 24 } });
    const marks = cluster.rerankers.map((w) => w.stderr.length);
    let killed: string | undefined;
    let jobId = "";
    let watching = true;
    const watcher = (async () => {
      while (watching && killed === undefined) {
        for (const [i, w] of cluster.rerankers.entries()) {
          const running = /running rerank job (\S+)/.exec(w.stderr.slice(marks[i]));
          if (running === null) continue;
          w.child.kill("SIGKILL");
          killed = w.name;
          jobId = running[1]!;
          break;
        }
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const outcome = await askStream(cluster.gatewayAddress, request);
    watching = false;
    await watcher;
    expect(killed, cluster.logs()).toBeDefined();
    expect(outcome.error, cluster.logs()).toBeUndefined();
    expect(stages(outcome.events)).toEqual(["retrieved", "aligned", "reranked", "initialAnswerDelta", "occlusionProgress", "attribution", "selection", "gapFill", "finalAnswerDelta", "finalAnswer", "done"]);
    // The killed worker never finished it; the survivor ran it on its second delivery.
    const victim = cluster.rerankers.find((w) => w.name === killed)!;
    expect(victim.stderr).not.toContain(`finished rerank job ${jobId}`);
    expect(cluster.rerankers.some((w) => w.name !== killed && w.stderr.includes(`running rerank job ${jobId} (attempt 2`)), cluster.logs()).toBe(true);
    const local = parse((await runCli(["ask", QUESTIONS[0]!, "--json", "--store", storeEmbedded, "--model", TEST_MODEL, "--reranker", rerankerPath, ...ENGINE, "--k", "20", "--max-tokens", "24"])).stdout);
    expectSameRanking(first(outcome.events, "reranked") as Reranked, first(local, "reranked") as Reranked);
    expect(first(outcome.events, "finalAnswer")).toEqual(first(local, "finalAnswer"));
    await victim.exited;
    await cluster.addRerankerWorker().waitFor(/serving re-ranker/);
  });

  it("distributed reranker - no worker serves the re-ranker id: UNAVAILABLE at once, naming the id; no fallback", async () => {
    const gateway = await startServer(["serve", "--nats", cluster.url, ...cluster.credentials("gateway"), "--model", cluster.modelId, "--reranker", "no-such-reranker", "--port", "0", ...REQUEST]);
    try {
      const started = performance.now();
      const deadline = new Date(Date.now() + 60_000);
      const client = new AttrRagServiceClient(gateway.address, grpcCredentials.createInsecure());
      const events: AskEvent[] = [];
      const error = await new Promise<GrpcError | undefined>((resolve) => {
        const call = client.ask(AskRequest.fromPartial({ question: QUESTIONS[1], retrieval: { k: 6 }, generation: { maxTokens: 24 } }), { deadline });
        call.on("data", (r: { event: AskEvent }) => events.push(r.event));
        call.on("error", resolve);
        call.on("end", () => resolve(undefined));
      });
      client.close();
      expect(error?.code).toBe(status.UNAVAILABLE);
      expect(error?.details).toMatch(/no worker serves the re-ranker "no-such-reranker": start one with `attr-rag worker --reranker R\.gguf --reranker-id no-such-reranker --nats URL`/);
      // Well within the deadline: it looked for a worker (½ s) and gave up, it did not wait for one.
      expect(performance.now() - started).toBeLessThan(15_000);
      expect(events.map((e) => e.stage?.$case)).not.toContain("reranked");
    } finally {
      await gateway.stop();
    }
  });

  it("distributed reranker - a re-ranker id that only a generator worker serves: the worker refuses the rerank job, the client gets INVALID_ARGUMENT", async () => {
    const gateway = await startServer(["serve", "--nats", cluster.url, ...cluster.credentials("gateway"), "--model", cluster.modelId, "--reranker", cluster.modelId, "--port", "0", ...REQUEST]);
    try {
      const outcome = await askStream(gateway.address, AskRequest.fromPartial({ question: QUESTIONS[1], retrieval: { k: 6 }, generation: { maxTokens: 24 } }));
      expect(outcome.error?.code).toBe(status.INVALID_ARGUMENT);
      expect(outcome.error?.details).toMatch(new RegExp(`worker \\S+ serves occlusion, generation, likelihood jobs for ${cluster.modelId}, not rerank jobs; start a worker with --reranker for that id`));
    } finally {
      await gateway.stop();
    }
  });

  it("distributed IndexService - ingest and search through the gateway's port; the index's own port sees the same store; the same status codes", async () => {
    const indexAddress = /listening on (\S+)/.exec(cluster.index.stdout)![1]!;
    const viaGateway = new IndexServiceClient(cluster.gatewayAddress, grpcCredentials.createInsecure());
    const viaIndex = new IndexServiceClient(indexAddress, grpcCredentials.createInsecure());
    try {
      const before = await unary<GetStatsResponse>(viaGateway.getStats.bind(viaGateway), {});
      const text =
        "Buffer preparation for the zebrafish assay: dissolve 8.77 g of sodium chloride in 900 mL of water, " +
        "add 20 mL of 1 M Tris-HCl at pH 7.4, and bring the volume to one litre with water before autoclaving.";
      const ingested = await ingest(viaGateway, [
        { document: { id: "zebrafish-buffer", text, title: "Zebrafish buffer", source: "test", license: "CC0", metadata: {} }, waitForReplicas: 0 },
        { document: { id: "", text: "no id", title: "", source: "", license: "", metadata: {} }, waitForReplicas: 0 },
      ]);
      expect(ingested).toMatchObject({ indexed: 1, failed: 1 });
      expect(ingested.results.map((r) => r.status)).toEqual([IngestStatus.INGEST_STATUS_INDEXED, IngestStatus.INGEST_STATUS_FAILED]);
      expect(ingested.chunksAdded).toBeGreaterThan(0);
      const query = SearchRequest.fromPartial({ query: "How do I prepare the zebrafish buffer with sodium chloride and Tris?", options: { k: 3, mode: RetrievalMode.RETRIEVAL_MODE_HYBRID } });
      const found = await unary<SearchResponse>(viaGateway.search.bind(viaGateway), query);
      expect(found.chunks[0]?.chunk?.docId).toBe("zebrafish-buffer");
      const direct = await unary<SearchResponse>(viaIndex.search.bind(viaIndex), query);
      expect(direct.chunks.map((c) => c.chunk?.id)).toEqual(found.chunks.map((c) => c.chunk?.id));
      const [gs, is] = await Promise.all([unary<GetStatsResponse>(viaGateway.getStats.bind(viaGateway), {}), unary<GetStatsResponse>(viaIndex.getStats.bind(viaIndex), {})]);
      expect(gs).toEqual(is);
      expect(gs.documents).toBe(before.documents + 1);
      const chunks = await unary<GetChunksResponse>(viaGateway.getChunks.bind(viaGateway), { ranges: [{ docId: "zebrafish-buffer", firstOrdinal: 0, lastOrdinal: 10 }] });
      expect(chunks.chunks.map((c) => c.text).join(" ")).toContain("8.77 g of sodium chloride");
      // The same refusals, with the same codes and messages, on both ports.
      for (const [rpc, request] of [
        ["getChunks", GetChunksRequest.fromPartial({ ranges: [{ docId: "no-such-document", firstOrdinal: 0, lastOrdinal: 1 }] })],
        ["search", SearchRequest.fromPartial({ query: "   ", options: { k: 3 } })],
        ["embedTexts", EmbedTextsRequest.fromPartial({ texts: [""] })],
      ] as const) {
        const g = await failure(unary((viaGateway as any)[rpc].bind(viaGateway), request));
        const i = await failure(unary((viaIndex as any)[rpc].bind(viaIndex), request));
        expect(g, rpc).toEqual(i);
        expect([status.NOT_FOUND, status.INVALID_ARGUMENT], `${rpc}: ${JSON.stringify(g)}`).toContain(g.code);
      }
      const deleted = await unary<{ found: boolean; chunksDeleted: number }>(viaGateway.deleteDocument.bind(viaGateway), { docId: "zebrafish-buffer", waitForReplicas: 0 });
      expect(deleted).toEqual({ found: true, chunksDeleted: ingested.chunksAdded });
      expect((await unary<GetStatsResponse>(viaIndex.getStats.bind(viaIndex), {})).documents).toBe(before.documents);
    } finally {
      // Leave the store as the other tests expect it, also when an assertion above failed.
      await unary(viaIndex.deleteDocument.bind(viaIndex), { docId: "zebrafish-buffer", waitForReplicas: 0 }).catch(() => undefined);
      viaGateway.close();
      viaIndex.close();
    }
  });
});
