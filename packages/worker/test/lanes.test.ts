import { GetWorkerStatsRequest, WorkerStats, workerNatsService, type GenerationJob, type OcclusionJob } from "@attr-rag/contracts";
import { defaultModelPath, Model, type EngineContext } from "@attr-rag/engine";
import { connectNats, ConnectionWatch, natsServerMissing, requestProto, startNatsServer, type NatsConnection, type NatsServer } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NatsEngine } from "../src/nats/natsEngine.js";
import { startWorker, type RunningWorker } from "../src/nats/workerService.js";

const MODEL_ID = "stories260K";
const QUEUE = { ackWaitMs: 5_000, maxDeliver: 3, duplicateWindowMs: 60_000 };
const context = (question: string) => ({ question, sets: ["Lily went to the park.", "Tom found a red ball.", "The sun was warm."].map((text, i) => ({ setId: `s${i}`, segment: { content: { $case: "text" as const, value: text } } })) });

const occlusionJob = (jobId: string, maxTokens: number): OcclusionJob => ({
  jobId,
  requestId: jobId,
  model: MODEL_ID,
  context: context(`What happened in ${jobId}?`),
  generation: { maxTokens, strategy: 1 },
  occludeSetIndices: [],
  deadlineUnixMs: 0,
  streamProgress: false,
  dropSetsThatDoNotFit: false,
  scoreAnswerTokens: false,
});
const generationJob = (jobId: string): GenerationJob => ({ jobId, requestId: jobId, model: MODEL_ID, context: context("Who found the ball?"), generation: { maxTokens: 4, strategy: 0 }, deadlineUnixMs: 0, streamProgress: false });

const missing = natsServerMissing();

describe.skipIf(missing !== undefined)(`job lanes${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: NatsServer;
  let model: Model;
  let ctx: EngineContext;
  let client: NatsConnection;
  let workerNc: NatsConnection;
  let engine: NatsEngine;
  let worker: RunningWorker;
  const logs: string[] = [];

  beforeAll(async () => {
    server = await startNatsServer();
    model = await Model.load(defaultModelPath());
    ctx = await model.createContext({ contextSize: 4096, sequences: 4, threads: 1 });
    client = await connectNats({ url: server.url, name: "gateway" });
    engine = await NatsEngine.connect(client, new ConnectionWatch(client), { queue: QUEUE, log: (l) => logs.push(l) });
    workerNc = await connectNats({ url: server.url, name: "w1" });
    worker = await startWorker({ nc: workerNc, engine: ctx, modelId: MODEL_ID, workerId: "w1", queue: QUEUE, stopGraceMs: 2_000, log: (l) => logs.push(l) });
  });
  afterAll(async () => {
    await worker?.stop();
    await workerNc?.close();
    await client?.close();
    await ctx?.dispose();
    await model?.dispose();
    await server?.[Symbol.asyncDispose]();
  });

  it("job lanes - an interactive job queued behind batch jobs runs next: only the batch job already running goes first", async () => {
    const mark = logs.length; // what other tests logged before is not this test's order
    const signal = new AbortController().signal;
    const batchLane = engine.inLane("batch");
    const batch = Array.from({ length: 4 }, (_, i) => batchLane.occlude(occlusionJob(`batch-${i}`, 64), () => {}, signal));
    await expect.poll(() => logs.some((l) => l.includes("running occlusion job batch-0 ")), { timeout: 20_000 }).toBe(true);
    const interactive = await engine.generate(generationJob("interactive-0"), () => {}, signal);
    await Promise.all(batch);
    expect(interactive.workerId).toBe("w1");
    const started = logs.slice(mark).flatMap((l) => /running \w+ job (\S+) /.exec(l)?.[1] ?? []);
    expect(started).toEqual(["batch-0", "interactive-0", "batch-1", "batch-2", "batch-3"]);
  });

  it("job lanes - each worker answers its stats service: slots, jobs run, KV sequences in use ($SRV.STATS too)", async () => {
    const info = workerNatsService("w1");
    const askStats = () => requestProto(client, info.endpoints.stats.subject, {}, { request: GetWorkerStatsRequest, response: WorkerStats }, { timeoutMs: 2_000, serviceLabel: "worker w1", startHint: "attr-rag worker" });
    // A job's caller may hear its result a moment before the worker books the job as done.
    const settled = async () => {
      await expect.poll(async () => (await askStats()).runningJobs, { timeout: 5_000 }).toBe(0);
      return askStats();
    };
    // Jobs of its own, counted from what the worker had done before (other tests may have run first, or not).
    const before = await settled();
    const signal = new AbortController().signal;
    for (const id of ["stats-0", "stats-1"]) await engine.generate(generationJob(id), () => {}, signal);
    await engine.occlude(occlusionJob("stats-2", 16), () => {}, signal);
    const stats = await settled();
    expect(stats).toMatchObject({ workerId: "w1", model: MODEL_ID, slots: 1, runningJobs: 0, completedJobs: before.completedJobs + 3, sequencesInUse: 0 });
    // The engine context's scheduler: every job was admitted and decoded; nothing is reserved or waiting now.
    const scheduler = ctx.schedulerStats();
    expect(stats).toMatchObject({
      decodeCalls: scheduler.decodeCalls,
      decodeRows: scheduler.rows,
      jobsAdmitted: scheduler.jobsAdmitted,
      waitingJobs: 0,
      sequencesReserved: 0,
      cellsReserved: 0,
      sequences: 4,
      cells: ctx.info.contextSize,
    });
    expect(stats.jobsAdmitted).toBeGreaterThanOrEqual(before.jobsAdmitted + 3);
    expect(stats.decodeCalls).toBeGreaterThan(before.decodeCalls);
    expect(stats.decodeRows).toBeGreaterThan(stats.decodeCalls);
    expect(stats.meanRowsPerCall).toBeCloseTo(stats.decodeRows / stats.decodeCalls, 6);
    const replies = await client.requestMany("$SRV.STATS.attr-rag-worker", undefined, { maxWait: 1_000 });
    const all: { name: string; endpoints: { data: unknown }[] }[] = [];
    for await (const m of replies) all.push(m.json());
    expect(all).toHaveLength(1);
    expect(all[0]!.name).toBe("attr-rag-worker");
    expect(WorkerStats.fromJSON(all[0]!.endpoints[0]!.data)).toEqual(stats);
  });
});
