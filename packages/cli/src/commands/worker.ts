import type { Command } from "commander";
import { Model, ModelLoadError, resolveModel } from "@attr-rag/engine";
import { DEFAULT_JOB_QUEUE } from "@attr-rag/nats";
import { modelIdOf, startWorker } from "@attr-rag/worker";
import { isSubjectToken } from "@attr-rag/contracts";
import { CliError } from "../cliError.js";
import { addNatsOptions, connectNatsCli, natsOptions, type NatsFlags } from "../natsCli.js";
import { positiveInt } from "../parseArgs.js";
import { untilSignal } from "../serverCli.js";

interface WorkerFlags extends NatsFlags {
  model?: string;
  modelId?: string;
  name?: string;
  jobs: string;
  ackWait: string;
  maxDeliver: string;
  threads?: string;
  contextSize: string;
  sequences?: string;
  batchSize: string;
  gpuLayers: string;
  stopGrace: string;
}

/** `attr-rag worker`: engine jobs from the NATS JetStream work queue, on this machine's engine. */
export function registerWorkerCommand(program: Command): void {
  const command = program
    .command("worker")
    .summary("run engine jobs (occlusion, generation, likelihood) from the NATS JetStream work queue")
    .description(
      [
        "Loads --model and pulls the jobs for it (its model id) from the ATTR_RAG_JOBS work queue, through the durable",
        "consumer every worker of that model shares: each job runs on one worker, which streams progress and publishes",
        "the result, then acks. Long jobs keep saying they are working, so they are not redelivered; a crashed worker's",
        "jobs are, after --ack-wait. A job that failed --max-deliver times goes to the dead letters. SIGTERM/SIGINT",
        "finishes the running job (up to --stop-grace), hands back the rest and exits.",
      ].join("\n"),
    )
    .option("--model <path|name>", "generator GGUF: a path or a model-cache name (required)")
    .option("--model-id <id>", "the id gateways ask for (default: the file name without .gguf)")
    .option("--name <id>", "this worker's id in logs and results (default: worker-<pid>)")
    .option("--jobs <n>", "jobs decoded together on the one engine context (continuous batching: each llama_decode step carries every running job's tokens)", "1")
    .option("--ack-wait <seconds>", "seconds a job may go unacknowledged before it is redelivered", String(DEFAULT_JOB_QUEUE.ackWaitMs / 1000))
    .option("--max-deliver <n>", "deliveries before a job goes to the dead letters", String(DEFAULT_JOB_QUEUE.maxDeliver))
    .option("--threads <n>", "engine CPU threads (default: all)")
    .option("--context-size <n>", "generator KV cells, shared by its parallel sequences", "32768")
    .option("--sequences <n>", "parallel sequences of the generator, shared by the running jobs (default 4 per job)")
    .option("--batch-size <n>", "tokens per llama_decode call", "512")
    .option("--gpu-layers <n>", "layers offloaded to a GPU backend, -1 = all", "0")
    .option("--stop-grace <seconds>", "how long a stop waits for the running job", "30");
  addNatsOptions(command, true).action(async (o: WorkerFlags) => {
    const nats = natsOptions(o, o.name ?? `attr-rag-worker-${process.pid}`);
    if (nats === undefined) throw new CliError("--nats URL is required (or set ATTR_RAG_NATS)");
    if (o.model === undefined) throw new CliError("--model PATH|NAME is required");
    const gpuLayers = Number(o.gpuLayers);
    if (!Number.isInteger(gpuLayers) || gpuLayers < -1) throw new CliError(`--gpu-layers must be an integer ≥ -1, got "${o.gpuLayers}"`);
    let path: string;
    try {
      path = resolveModel(o.model);
    } catch (err) {
      throw new CliError((err as Error).message, 2, { cause: err });
    }
    const modelId = o.modelId ?? modelIdOf(path);
    if (!isSubjectToken(modelId)) throw new CliError(`--model-id must be one NATS subject token (no '.', '*', '>' or spaces), got "${modelId}"`);
    const workerId = o.name ?? `worker-${process.pid}`;
    if (!isSubjectToken(workerId)) throw new CliError(`--name must be one NATS subject token (no '.', '*', '>' or spaces), got "${workerId}"`);
    const queue = { ackWaitMs: positiveInt("--ack-wait", o.ackWait) * 1000, maxDeliver: positiveInt("--max-deliver", o.maxDeliver), duplicateWindowMs: DEFAULT_JOB_QUEUE.duplicateWindowMs };
    const model = await Model.load(path, { gpuLayers }).catch((err: unknown) => {
      throw err instanceof ModelLoadError ? new CliError(err.message, 2, { cause: err }) : err;
    });
    try {
      const engine = await model.createContext({
        contextSize: positiveInt("--context-size", o.contextSize),
        sequences: o.sequences !== undefined ? positiveInt("--sequences", o.sequences) : Math.min(256, 4 * positiveInt("--jobs", o.jobs)),
        jobs: positiveInt("--jobs", o.jobs),
        batchSize: positiveInt("--batch-size", o.batchSize),
        ...(o.threads !== undefined ? { threads: positiveInt("--threads", o.threads) } : {}),
      });
      const nc = await connectNatsCli(nats);
      try {
        const worker = await startWorker({
          nc,
          engine,
          modelId,
          workerId,
          concurrency: positiveInt("--jobs", o.jobs),
          queue,
          stopGraceMs: positiveInt("--stop-grace", o.stopGrace) * 1000,
          log: (line) => process.stderr.write(`attr-rag: ${line}\n`),
        });
        const stop = untilSignal();
        process.stdout.write(`worker ${workerId} serving model ${modelId} on ${nats.url}\n`);
        const signal = await Promise.race([stop, worker.stopped.then(() => undefined)]);
        if (signal !== undefined) process.stderr.write(`attr-rag: ${signal}: stopping worker ${workerId}\n`);
        await worker.stop();
        process.stderr.write(`attr-rag: worker ${workerId} stopped after ${worker.completed} jobs\n`);
      } finally {
        await nc.drain().catch(() => nc.close());
      }
    } finally {
      await model.dispose();
    }
  });
}
