import type { Command } from "commander";
import { basename } from "node:path";
import { Model, ModelLoadError, openEmbedContext, resolveModel, type EngineContext } from "@attr-rag/engine";
import { DEFAULT_JOB_QUEUE } from "@attr-rag/nats";
import { EMBED_KINDS, modelIdOf, RERANK_KINDS, startWorker, type RunningWorker } from "@attr-rag/worker";
import { embedderToken, ggufEmbedderId, isSubjectToken } from "@attr-rag/contracts";
import { CliError } from "../cliError.js";
import { addNatsOptions, connectNatsCli, natsOptions, type NatsFlags } from "../natsCli.js";
import { oneOf, positiveInt } from "../parseArgs.js";
import { lineLog, logger, withoutCredentials } from "@attr-rag/telemetry";
import { untilSignal } from "../serverCli.js";

interface WorkerFlags extends NatsFlags {
  model?: string;
  modelId?: string;
  reranker?: string;
  rerankerId?: string;
  embedder?: string;
  name?: string;
  jobs: string;
  ackWait: string;
  maxDeliver: string;
  threads?: string;
  contextSize: string;
  sequences?: string;
  batchSize: string;
  sampling: string;
  kvCache: string;
  flashAttention: string;
  gpuLayers?: string;
  stopGrace: string;
}

/** `attr-rag worker`: engine jobs from the NATS JetStream work queue, on this machine's engine. */
export function registerWorkerCommand(program: Command): void {
  const command = program
    .command("worker")
    .summary("run engine jobs (occlusion, generation, likelihood, rerank, embed) from the NATS JetStream work queue")
    .description(
      [
        "Loads --model and pulls the jobs for it (its model id) from the ATTR_RAG_JOBS work queue, through the durable",
        "consumer every worker of that model shares: each job runs on one worker, which streams progress and publishes",
        "the result, then acks. Long jobs keep saying they are working, so they are not redelivered; a crashed worker's",
        "jobs are, after --ack-wait. A job that failed --max-deliver times goes to the dead letters. SIGTERM/SIGINT",
        "finishes the running job (up to --stop-grace), hands back the rest and exits.",
        "With --reranker it also (or, without --model, only) serves rerank jobs for that cross-encoder's id, which",
        "`attr-rag serve --nats --reranker ID` sends.",
        "With --embedder it also (or alone) serves embed jobs for that GGUF embedder: the distributed index",
        "(`attr-rag index serve --nats`) sends ingest and query embedding to the workers serving its store's embedder.",
      ].join("\n"),
    )
    .option("--model <path|name>", "generator GGUF: a path or a model-cache name (required unless --reranker)")
    .option("--model-id <id>", "the id gateways ask for (default: the file name without .gguf)")
    .option("--reranker <path|name>", "GGUF cross-encoder: serve rerank jobs for it too")
    .option("--reranker-id <id>", "the re-ranker id gateways ask for (serve --reranker ID; default: the file name without .gguf)")
    .option("--embedder <path|name>", "GGUF embedder: serve embed jobs for the stores built with it (its id is gguf:<file>@<parameters>)")
    .option("--name <id>", "this worker's id in logs and results (default: worker-<pid>)")
    .option("--jobs <n>", "jobs decoded together on the one engine context (continuous batching: each llama_decode step carries every running job's tokens)", "1")
    .option("--ack-wait <seconds>", "seconds a job may go unacknowledged before it is redelivered", String(DEFAULT_JOB_QUEUE.ackWaitMs / 1000))
    .option("--max-deliver <n>", "deliveries before a job goes to the dead letters", String(DEFAULT_JOB_QUEUE.maxDeliver))
    .option("--threads <n>", "engine CPU threads (default: all)")
    .option("--context-size <n>", "generator KV cells, shared by its parallel sequences", "32768")
    .option("--sequences <n>", "parallel sequences of the generator, shared by the running jobs (default 4 per job)")
    .option("--batch-size <n>", "tokens per llama_decode call", "512")
    .option("--sampling <path>", "output rows: device (greedy token, margin and log-probabilities in the decode graph) | host (whole logits rows)", "device")
    .option("--kv-cache <layout>", "generator KV cache: streams (one per sequence) | unified", "streams")
    .option("--flash-attention <mode>", "generator flash attention: off | on | auto", "off")
    .option("--gpu-layers <n>", "layers offloaded to the GPU backend (--gpu), -1 = all (default: $ATTR_RAG_GPU_LAYERS, else -1 with --gpu cuda|vulkan, else 0)")
    .option("--stop-grace <seconds>", "how long a stop waits for the running job", "30");
  addNatsOptions(command, true).action(async (o: WorkerFlags) => {
    const nats = natsOptions(o, o.name ?? `attr-rag-worker-${process.pid}`);
    if (nats === undefined) throw new CliError("--nats URL is required (or set ATTR_RAG_NATS)");
    if (o.model === undefined && o.reranker === undefined && o.embedder === undefined) {
      throw new CliError("--model PATH|NAME is required (or --reranker PATH|NAME for a re-rank-only worker, --embedder PATH|NAME for an embedding-only one)");
    }
    const gpuLayers = o.gpuLayers === undefined ? undefined : Number(o.gpuLayers);
    if (gpuLayers !== undefined && (!Number.isInteger(gpuLayers) || gpuLayers < -1)) throw new CliError(`--gpu-layers must be an integer ≥ -1, got "${o.gpuLayers}"`);
    const generator = o.model !== undefined ? servedModel(o.model, o.modelId, "--model-id") : undefined;
    const reranker = o.reranker !== undefined ? servedModel(o.reranker, o.rerankerId, "--reranker-id") : undefined;
    if (o.rerankerId !== undefined && reranker === undefined) throw new CliError("--reranker-id names the id of --reranker; pass --reranker PATH|NAME too");
    if (generator !== undefined && reranker !== undefined && generator.id === reranker.id) {
      throw new CliError(`the generator and the re-ranker would both serve id "${generator.id}"; give one of them another id (--model-id / --reranker-id)`);
    }
    const workerId = o.name ?? `worker-${process.pid}`;
    if (!isSubjectToken(workerId)) throw new CliError(`--name must be one NATS subject token (no '.', '*', '>' or spaces), got "${workerId}"`);
    const queue = { ackWaitMs: positiveInt("--ack-wait", o.ackWait) * 1000, maxDeliver: positiveInt("--max-deliver", o.maxDeliver), duplicateWindowMs: DEFAULT_JOB_QUEUE.duplicateWindowMs };
    const threads = o.threads !== undefined ? { threads: positiveInt("--threads", o.threads) } : {};
    const load = (path: string) =>
      Model.load(path, gpuLayers !== undefined ? { gpuLayers } : {}).catch((err: unknown) => {
        throw err instanceof ModelLoadError ? new CliError(err.message, 2, { cause: err }) : err;
      });
    const held: AsyncDisposable[] = [];
    try {
      const serving: { kind: "generator" | "reranker" | "embedder"; id: string; engine: EngineContext; jobs: number }[] = [];
      if (generator !== undefined) {
        const model = await load(generator.path);
        held.push(model);
        const jobs = positiveInt("--jobs", o.jobs);
        const engine = await model.createContext({
          contextSize: positiveInt("--context-size", o.contextSize),
          sequences: o.sequences !== undefined ? positiveInt("--sequences", o.sequences) : Math.min(256, 4 * jobs),
          jobs,
          batchSize: positiveInt("--batch-size", o.batchSize),
          sampling: oneOf("--sampling", o.sampling, ["device", "host"] as const),
          kvUnified: oneOf("--kv-cache", o.kvCache, ["streams", "unified"] as const) === "unified",
          flashAttention: oneOf("--flash-attention", o.flashAttention, ["off", "on", "auto"] as const),
          ...threads,
        });
        serving.push({ kind: "generator", id: generator.id, engine, jobs });
      }
      if (reranker !== undefined) {
        const model = await load(reranker.path);
        held.push(model);
        // The same context the embedded gateway opens for its re-ranker, so scores agree across modes.
        const engine = await model.createContext({ kind: "rerank", ...threads }).catch((err: unknown) => {
          throw new CliError(`--reranker ${o.reranker}: ${(err as Error).message}`, 2, { cause: err });
        });
        serving.push({ kind: "reranker", id: reranker.id, engine, jobs: 1 });
      }
      if (o.embedder !== undefined) {
        const model = await load(servedModel(o.embedder, undefined, "--embedder").path);
        held.push(model);
        // The context the index's own GgufEmbedder opens, so a chunk's vector is the same wherever it was made.
        const { context } = await openEmbedContext(model, threads).catch((err: unknown) => {
          throw new CliError(`--embedder ${o.embedder}: ${(err as Error).message}`, 2, { cause: err });
        });
        const id = ggufEmbedderId(basename(model.info.path), model.info.nParams);
        serving.push({ kind: "embedder", id: embedderToken(id), engine: context, jobs: 1 });
        logger("worker").info(`embedder ${id} (embed jobs for ${embedderToken(id)})`);
      }
      const nc = await connectNatsCli(nats);
      try {
        const workers: RunningWorker[] = [];
        for (const s of serving) {
          workers.push(
            await startWorker({
              nc,
              engine: s.engine,
              modelId: s.id,
              workerId,
              ...(s.kind === "reranker" ? { kinds: RERANK_KINDS } : s.kind === "embedder" ? { kinds: EMBED_KINDS } : {}),
              concurrency: s.jobs,
              queue,
              stopGraceMs: positiveInt("--stop-grace", o.stopGrace) * 1000,
              log: lineLog("worker"),
            }),
          );
        }
        const stop = untilSignal();
        for (const s of serving) process.stdout.write(`worker ${workerId} serving ${s.kind === "generator" ? "model" : s.kind === "reranker" ? "re-ranker" : "embedder"} ${s.id} on ${withoutCredentials(nats.url)}\n`);
        const signal = await Promise.race([stop, ...workers.map((w) => w.stopped.then(() => undefined))]);
        if (signal !== undefined) logger("worker").info(`${signal}: stopping worker ${workerId}`);
        await Promise.all(workers.map((w) => w.stop()));
        logger("worker").info(`worker ${workerId} stopped after ${workers.reduce((n, w) => n + w.completed, 0)} jobs`);
      } finally {
        await nc.drain().catch(() => nc.close());
      }
    } finally {
      for (const h of held.reverse()) await h[Symbol.asyncDispose]();
    }
  });
}

/** A model file to serve and the id gateways ask for it by (a NATS subject token). */
function servedModel(nameOrPath: string, id: string | undefined, idFlag: string): { path: string; id: string } {
  let path: string;
  try {
    path = resolveModel(nameOrPath);
  } catch (err) {
    throw new CliError((err as Error).message, 2, { cause: err });
  }
  const served = id ?? modelIdOf(path);
  if (!isSubjectToken(served)) throw new CliError(`${idFlag} must be one NATS subject token (no '.', '*', '>' or spaces), got "${served}"`);
  return { path, id: served };
}
