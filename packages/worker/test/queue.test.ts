import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { DEAD_LETTER_STREAM, DeadLetter, GenerationJob, GenerationResult, JobErrorCode, JOBS_STREAM, jobResultSubject, jobSubject, type OcclusionJob } from "@attr-rag/contracts";
import { defaultModelPath, Model, type EngineContext } from "@attr-rag/engine";
import { connectNats, ConnectionWatch, natsServerMissing, startNatsServer, type NatsConnection, type NatsServer } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { JobFailure } from "../src/jobFailure.js";
import { NatsEngine } from "../src/nats/natsEngine.js";
import { runOcclusionJob } from "../src/runOcclusionJob.js";
import { runLikelihoodJob } from "../src/runLikelihoodJob.js";
import { startWorker, type RunningWorker } from "../src/nats/workerService.js";

const MODEL_ID = "stories260K";
const QUEUE = { ackWaitMs: 2_000, maxDeliver: 3, duplicateWindowMs: 60_000 };
const context = (question: string) => ({ question, sets: ["Lily went to the park.", "Tom found a red ball.", "The sun was warm."].map((text, i) => ({ setId: `s${i}`, segment: { content: { $case: "text" as const, value: text } } })) });

function generationJob(jobId: string, maxTokens = 4): GenerationJob {
  return { jobId, requestId: "r", model: MODEL_ID, context: context(`Question ${jobId}?`), generation: { maxTokens, strategy: 0 }, deadlineUnixMs: 0, streamProgress: true };
}

function occlusionJob(jobId: string, maxTokens: number): OcclusionJob {
  return {
    jobId,
    requestId: "r",
    model: MODEL_ID,
    context: context("What happened?"),
    generation: { maxTokens, strategy: 1 },
    occludeSetIndices: [],
    deadlineUnixMs: 0,
    streamProgress: true,
    dropSetsThatDoNotFit: false,
    scoreAnswerTokens: false,
  };
}

const missing = natsServerMissing();

describe.skipIf(missing !== undefined)(`engine jobs over JetStream${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: NatsServer;
  let model: Model;
  let client: NatsConnection;
  let engine: NatsEngine;
  const logs: string[] = [];
  const workers: { name: string; worker: RunningWorker; nc: NatsConnection; ctx: EngineContext }[] = [];

  async function addWorker(name: string) {
    const nc = await connectNats({ url: server.url, name });
    const ctx = await model.createContext({ contextSize: 4096, sequences: 4, threads: 1 });
    const worker = await startWorker({ nc, engine: ctx, modelId: MODEL_ID, workerId: name, queue: QUEUE, stopGraceMs: 2_000, log: (l) => logs.push(l) });
    workers.push({ name, worker, nc, ctx });
  }

  beforeAll(async () => {
    server = await startNatsServer();
    model = await Model.load(defaultModelPath());
    client = await connectNats({ url: server.url, name: "gateway" });
    engine = await NatsEngine.connect(client, new ConnectionWatch(client), { queue: QUEUE, log: (l) => logs.push(l) });
    // Three healthy workers for MODEL_ID serve every test; tests that stop or break workers start their own
    // under model ids of their own, so the tests can run in any order or alone.
    for (const name of ["w1", "w2", "w3"]) await addWorker(name);
  });
  afterAll(async () => {
    for (const w of workers) {
      await w.worker.stop();
      await w.nc.close();
    }
    await client?.close();
    await model?.dispose();
    await server?.[Symbol.asyncDispose]();
  });

  it("worker queue - 3 workers share 30 jobs: every job is done exactly once and each worker took at least one", async () => {
    const before = new Map(workers.map((w) => [w.name, w.worker.completed]));
    const signal = new AbortController().signal;
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => engine.generate(generationJob(`job-${i}`), () => {}, signal)));
    expect(results.map((r) => r.jobId)).toEqual(Array.from({ length: 30 }, (_, i) => `job-${i}`));
    const byWorker = new Map<string, number>();
    for (const r of results) byWorker.set(r.workerId, (byWorker.get(r.workerId) ?? 0) + 1);
    expect([...byWorker.keys()].sort()).toEqual(["w1", "w2", "w3"]);
    for (const r of results) expect(r.answer!.tokenIds).toHaveLength(4);
    // Each job ran once: one start in the logs, no redelivery.
    for (let i = 0; i < 30; i++) expect(logs.filter((l) => l.includes(`running generation job job-${i} (`))).toEqual([expect.stringContaining("(attempt 1,")]);
    // A worker publishes the result, then acks: the caller can hold every result a moment before the last ack.
    const completedHere = (w: (typeof workers)[number]) => w.worker.completed - before.get(w.name)!;
    await expect.poll(() => workers.reduce((n, w) => n + completedHere(w), 0)).toBe(30);
    for (const w of workers) expect(completedHere(w)).toBe(byWorker.get(w.name));
    // Work-queue retention: every acknowledged job has left the stream.
    const jsm = await jetstreamManager(client);
    await expect.poll(async () => (await jsm.streams.info(JOBS_STREAM)).state.messages).toBe(0);
  });

  it("worker queue - a likelihood job over NATS gives the utilities the in-process runner gives", async () => {
    const job = {
      jobId: "lik-1",
      requestId: "r",
      model: MODEL_ID,
      context: context("What happened?"),
      target: { content: { $case: "text" as const, value: "Tom found a ball." } },
      coalitions: [[0, 1, 2], [0, 2], [1]].map((setIndices) => ({ setIndices })),
      deadlineUnixMs: 0,
      perToken: true,
    };
    const remote = await engine.likelihood(job, new AbortController().signal);
    const local = await runLikelihoodJob(workers[0]!.ctx, { ...job, jobId: "lik-local" }, new AbortController().signal);
    expect(remote.logLikelihoods).toEqual(local.logLikelihoods);
    // Per-token log-probabilities (sentence-level attribution of the final answer) travel whole.
    expect(remote.tokenLogProbs.map((t) => t.logProbs)).toEqual(local.tokenLogProbs.map((t) => t.logProbs));
    expect(remote.tokenOffsets).toEqual(local.tokenOffsets);
    expect(remote.tokenLogProbs).toHaveLength(3);
    expect(remote.logLikelihoods).toHaveLength(3);
    expect(["w1", "w2", "w3"]).toContain(remote.workerId);
  });

  it("worker queue - an occlusion job's sentence scores over NATS are the in-process runner's, number for number", async () => {
    const job = { ...occlusionJob("occ-sentences", 8), generation: { maxTokens: 8, strategy: 3 }, scoreAnswerTokens: true, streamProgress: false };
    const remote = await engine.occlude(job, () => {}, new AbortController().signal);
    const local = await runOcclusionJob(workers[0]!.ctx, { ...job, jobId: "occ-sentences-local" }, () => {}, new AbortController().signal);
    expect(remote.answerScores).toBeDefined();
    expect(remote.answerScores).toEqual(local.answerScores);
    expect(remote.answerScores!.withoutSet).toHaveLength(3);
    expect(remote.answerScores!.full).toHaveLength(remote.fullAnswer!.tokenIds.length);
  });

  it("worker queue - a job for another model is never taken; cancelling it takes it off the queue", async () => {
    const controller = new AbortController();
    const waiting = engine.generate({ ...generationJob("other-1"), model: "another-model" }, () => {}, controller.signal).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 1_500));
    const jsm = await jetstreamManager(client);
    expect((await jsm.streams.info(JOBS_STREAM)).state.messages).toBe(1); // still there, untaken
    controller.abort(new Error("gave up"));
    expect(((await waiting) as Error).message).toBe("gave up");
    await expect.poll(async () => (await jsm.streams.info(JOBS_STREAM)).state.messages).toBe(0);
  });

  it("worker queue - a cancel reaches the worker running the job: it is abandoned, its KV freed, and not redelivered", async () => {
    const controller = new AbortController();
    let progressed = 0;
    const running = engine.occlude(occlusionJob("long-1", 600), () => {
      if (++progressed === 3) controller.abort(new Error("client went away"));
    }, controller.signal);
    await expect(running).rejects.toThrow("client went away");
    await expect.poll(() => logs.some((l) => /cancelled occlusion job long-1; KV sequences in use 0/.test(l)), { timeout: 10_000 }).toBe(true);
    for (const w of workers) expect(w.ctx.sequencesInUse()).toBe(0);
    await new Promise((r) => setTimeout(r, QUEUE.ackWaitMs + 500));
    expect(logs.filter((l) => /running occlusion job long-1/.test(l))).toHaveLength(1);
  });

  it("worker queue - an undecodable job goes to the dead letters and its caller gets INVALID_ARGUMENT at once", async () => {
    const js = jetstream(client);
    const result = client.subscribe(jobResultSubject("garbage-1"), { max: 1 });
    await js.publish(jobSubject("generation", MODEL_ID), Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x0f), { msgID: "garbage-1" });
    let error;
    for await (const m of result) error = GenerationResult.decode(m.data).error;
    expect(error?.code).toBe(JobErrorCode.JOB_ERROR_CODE_INVALID_ARGUMENT);
    expect(error?.message).toMatch(/could not read the job: undecodable generation job/);
    const jsm = await jetstreamManager(client);
    const dead = await jsm.streams.getMessage(DEAD_LETTER_STREAM, { last_by_subj: "attr_rag.v1.dead.generation" });
    expect(DeadLetter.decode(dead!.data)).toMatchObject({ jobId: "garbage-1", deliveries: 1, reason: expect.stringMatching(/^undecodable generation job/) });
  });

  it("worker queue - a stopping worker finishes the running job within its grace, else hands it back to another worker", async () => {
    // Model ids of their own, so only the workers started here see these jobs.
    const start = async (name: string, modelId: string, stopGraceMs: number) => {
      const nc = await connectNats({ url: server.url, name });
      const ctx = await model.createContext({ contextSize: 4096, sequences: 4, threads: 1 });
      const worker = await startWorker({ nc, engine: ctx, modelId, workerId: name, queue: QUEUE, stopGraceMs, log: (l) => logs.push(l) });
      return { worker, nc, ctx };
    };
    const job = (jobId: string, model: string) => ({ ...generationJob(jobId, 600), model });
    const running = (what: string) => expect.poll(() => logs.some((l) => l.includes(`running ${what}`)), { timeout: 10_000 }).toBe(true);

    const a = await start("stop-a", "stoptest-a", 30_000);
    const finished = engine.generate(job("stop-1", "stoptest-a"), () => {}, new AbortController().signal);
    await running("generation job stop-1");
    await a.worker.stop();
    const result = await finished;
    expect(result.workerId).toBe("stop-a");
    expect(result.answer!.tokenIds.length).toBeGreaterThan(0);
    expect(a.worker.completed).toBe(1);
    await a.nc.close();

    const b = await start("stop-b", "stoptest-b", 1);
    // A long occlusion job (4 answers of up to 600 tokens) that a 1 ms grace cannot wait for.
    const handedBack = engine.occlude({ ...occlusionJob("stop-2", 600), model: "stoptest-b" }, () => {}, new AbortController().signal);
    await running("occlusion job stop-2");
    await b.worker.stop();
    expect(logs).toContain("worker stop-b: stopping; occlusion job stop-2 handed back to the queue");
    expect(b.worker.completed).toBe(0);
    expect(b.ctx.sequencesInUse()).toBe(0);
    await b.nc.close();
    const c = await start("stop-c", "stoptest-b", 30_000);
    const second = await handedBack;
    expect(second.workerId).toBe("stop-c");
    expect(logs.some((l) => /worker stop-c: running occlusion job stop-2 \(attempt 2/.test(l))).toBe(true);
    expect(second.occluded).toHaveLength(3);
    await c.worker.stop();
    await c.nc.close();
  });

  it("worker queue - a job that fails on every delivery ends in the dead letters after max_deliver, and its caller is told", async () => {
    // A worker whose engine is gone fails every job unexpectedly (as one that crashed would), so each
    // delivery is handed back until max_deliver runs out. Its own model id: the healthy workers never see the job.
    const broken = await model.createContext({ contextSize: 2048, sequences: 2 });
    await broken.dispose();
    const nc = await connectNats({ url: server.url, name: "broken" });
    const worker = await startWorker({ nc, engine: broken, modelId: "poisontest", workerId: "broken", queue: QUEUE, stopGraceMs: 2_000, log: (l) => logs.push(l) });
    const poison = { ...generationJob("poison-1"), model: "poisontest" };
    onTestFinished(async () => {
      await worker.stop();
      await nc.close();
    });
    const started = performance.now();
    const failed = await engine.generate(poison, () => {}, new AbortController().signal).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(JobFailure);
    expect((failed as JobFailure).code).toBe(JobErrorCode.JOB_ERROR_CODE_INTERNAL);
    expect((failed as JobFailure).message).toBe(
      "generation job poison-1 failed on all 3 of its deliveries (the workers running it crashed or failed each time); it was moved to the dead letters (attr_rag.v1.dead.generation)",
    );
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(logs.filter((l) => /running generation job poison-1/.test(l)).map((l) => /attempt (\d)/.exec(l)![1])).toEqual(["1", "2", "3"]);
    const jsm = await jetstreamManager(client);
    const dead = await jsm.streams.getMessage(DEAD_LETTER_STREAM, { last_by_subj: "attr_rag.v1.dead.generation" });
    expect(DeadLetter.decode(dead!.data)).toMatchObject({ jobId: "poison-1", deliveries: 3, payload: GenerationJob.encode(poison).finish() });
    expect((await jsm.streams.info(JOBS_STREAM)).state.messages).toBe(0);
  });
});
