import { basename } from "node:path";
import { embedderToken, ggufEmbedderId, JobErrorCode } from "@attr-rag/contracts";
import { defaultModelPath, Model, openEmbedContext, unitEmbeddings, type EngineContext } from "@attr-rag/engine";
import { connectNats, ConnectionWatch, natsServerMissing, startNatsServer, type NatsConnection, type NatsServer } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NatsEngine } from "../src/nats/natsEngine.js";
import { splitTexts, WorkerEmbedder, type LocalEmbedder } from "../src/nats/workerEmbedder.js";
import { EMBED_KINDS, startWorker, type RunningWorker } from "../src/nats/workerService.js";
import { runEmbedJob } from "../src/runEmbedJob.js";

const QUEUE = { ackWaitMs: 5_000, maxDeliver: 3, duplicateWindowMs: 60_000 };
const missing = natsServerMissing();

/** The index's own GgufEmbedder, as far as this package can see it: the same context and the same calls. */
function localEmbedder(id: string, dimensions: number, context: EngineContext, calls: { texts: number }): LocalEmbedder {
  return {
    id,
    dimensions,
    embed: async (texts) => {
      calls.texts += texts.length;
      return unitEmbeddings(context, texts, context.info.sequences);
    },
    dispose: async () => {},
    [Symbol.asyncDispose]: async () => {},
  };
}

const texts = Array.from({ length: 40 }, (_, i) => `Lily found ${i} red balls in the park, and Tom counted them ${i % 7} times.`);

describe.skipIf(missing !== undefined)(`embed jobs${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: NatsServer;
  let model: Model;
  let local: EngineContext;
  let remote: EngineContext;
  let id: string;
  let client: NatsConnection;
  let workerNc: NatsConnection;
  let engine: NatsEngine;
  let worker: RunningWorker | undefined;
  const logs: string[] = [];

  beforeAll(async () => {
    server = await startNatsServer();
    model = await Model.load(defaultModelPath());
    id = ggufEmbedderId(basename(model.info.path), model.info.nParams);
    ({ context: local } = await openEmbedContext(model, { threads: 1 }));
    ({ context: remote } = await openEmbedContext(model, { threads: 1 }));
    client = await connectNats({ url: server.url, name: "index" });
    engine = await NatsEngine.connect(client, new ConnectionWatch(client), { queue: QUEUE, log: (l) => logs.push(l) });
    workerNc = await connectNats({ url: server.url, name: "embed-worker" });
  });
  afterAll(async () => {
    await worker?.stop();
    await workerNc?.close();
    await client?.close();
    await local?.dispose();
    await remote?.dispose();
    await model?.dispose();
    await server?.[Symbol.asyncDispose]();
  });

  it("embed jobs - with no worker serving the embedder the index embeds itself and warns once; a worker's vectors equal its own", async () => {
    const calls = { texts: 0 };
    const dims = model.info.nEmbd;
    const warnings: string[] = [];
    const embedder = new WorkerEmbedder(localEmbedder(id, dims, local, calls), engine, client, (l) => warnings.push(l), 200);
    expect(embedder.token).toBe(embedderToken(id));

    const own = await embedder.embed(texts, undefined, "batch");
    expect(calls.texts).toBe(texts.length);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/warning: no worker serves the embedder gguf:stories260K\.gguf@\d+, so the index embeds in its own process; start workers with `attr-rag worker --embedder/);

    worker = await startWorker({ nc: workerNc, engine: remote, modelId: embedder.token, kinds: EMBED_KINDS, workerId: "e1", queue: QUEUE, stopGraceMs: 2_000, log: (l) => logs.push(l) });
    // A fresh embedder asks again (the first one trusts its answer for a while).
    const viaWorkers = new WorkerEmbedder(localEmbedder(id, dims, local, calls), engine, client, (l) => warnings.push(l), 500);
    const before = calls.texts;
    const mark = logs.length;
    const vectors = await viaWorkers.embed(texts, undefined, "batch");

    expect(calls.texts).toBe(before); // nothing embedded in process
    expect(warnings.at(-1)).toMatch(/embedding on the workers serving gguf:stories260K/);
    // 40 texts: five jobs of at most 8, each run by the worker.
    expect(logs.slice(mark).filter((l) => /running embed job emb-/.test(l))).toHaveLength(5);
    expect(vectors).toHaveLength(texts.length);
    vectors.forEach((v, i) => {
      expect(v).toHaveLength(dims);
      let norm = 0;
      let diff = 0;
      for (let j = 0; j < dims; j++) {
        norm += v[j]! * v[j]!;
        diff = Math.max(diff, Math.abs(v[j]! - own[i]![j]!));
      }
      expect(Math.abs(norm - 1)).toBeLessThan(1e-5);
      expect(diff, `text ${i}`).toBeLessThan(1e-4);
    });
    expect(await viaWorkers.embed([])).toEqual([]);
  });

  it("embed jobs - a job whose embedder is not the one its token names is refused, and no other embedder's worker sees it", async () => {
    const job = { jobId: "emb-mismatch", requestId: "", model: embedderToken(id), embedder: "gguf:other.gguf@1", texts: ["x"], deadlineUnixMs: 0 };
    await expect(runEmbedJob(remote, job, new AbortController().signal)).rejects.toMatchObject({ code: JobErrorCode.JOB_ERROR_CODE_INVALID_ARGUMENT, message: /whose token is not/ });
    // Another embedder's token is another queue: with no worker for it, its embedder stays in process.
    const calls = { texts: 0 };
    const other = new WorkerEmbedder(localEmbedder("gguf:other.gguf@1", model.info.nEmbd, local, calls), engine, client, () => {}, 200);
    expect(other.token).not.toBe(embedderToken(id));
    await other.embed(["a text"]);
    expect(calls.texts).toBe(1);
  });

  it("embed jobs - texts are split into jobs of at most 8 texts and 256 KiB", () => {
    expect(splitTexts(Array.from({ length: 17 }, () => "t")).map((j) => j.length)).toEqual([8, 8, 1]);
    const big = "x".repeat(200 * 1024);
    expect(splitTexts(["a", big, big, "b"]).map((j) => j.length)).toEqual([2, 2]);
    expect(splitTexts([])).toEqual([]);
  });
});
