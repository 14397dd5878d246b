// `attr-rag worker`: pulls engine jobs for its model from the JetStream work queue (the durable consumer all
// workers of that model share), runs them with the same runners as the embedded pipeline, publishes progress
// and the one result, then acks. Long jobs say they are working, so a live worker's job is never redelivered;
// a crashed worker's job is, after ack_wait. A cancel (or a passed deadline) abandons the job and frees its KV.
import { jetstream, jetstreamManager, type Consumer, type JsMsg } from "@nats-io/jetstream";
import {
  DeadLetter,
  GenerationJob,
  GenerationResult,
  JobErrorCode,
  JobProgress,
  JOBS_STREAM,
  LikelihoodJob,
  LikelihoodResult,
  OcclusionJob,
  OcclusionResult,
  RerankJob,
  RerankResult,
  EmbedJob,
  EmbedResult,
  deadLetterSubject,
  jobCancelSubject,
  jobProgressSubject,
  jobResultSubject,
  workerConsumer,
  JOB_LANES,
  GetWorkerStatsRequest,
  WorkerStats,
  workerNatsService,
  type JobError,
  type JobKind,
} from "@attr-rag/contracts";
import { AbortError, type EngineContext } from "@attr-rag/engine";
import { engineWorkerStats } from "../engineStats.js";
import { engineSources } from "../engineMetrics.js";
import { extractTrace, inSpan, lineLog, SpanKind, withLogFields } from "@attr-rag/telemetry";
import { Code, DEFAULT_JOB_QUEUE, ensureJobStreams, ensureWorkerConsumer, serveService, type JobQueueSettings, type NatsConnection } from "@attr-rag/nats";
import { JobFailure } from "../jobFailure.js";
import { runGenerationJob } from "../runGenerationJob.js";
import { runLikelihoodJob } from "../runLikelihoodJob.js";
import { runOcclusionJob } from "../runOcclusionJob.js";
import { runRerankJob } from "../runRerankJob.js";
import { runEmbedJob } from "../runEmbedJob.js";

export interface WorkerOptions {
  readonly nc: NatsConnection;
  readonly engine: EngineContext;
  /** The model id this worker serves (a subject token): it only ever sees jobs for it. */
  readonly modelId: string;
  /**
   * The job kinds it runs: a generator context runs occlusion, generation and likelihood jobs (the default),
   * a re-ranker context rerank jobs, an embedder context embed jobs. A job of another kind for its model id is
   * refused (INVALID_ARGUMENT).
   */
  readonly kinds?: readonly JobKind[];
  readonly workerId: string;
  /** Jobs run at once (they share the engine context, which runs one at a time). Default 1. */
  readonly concurrency?: number;
  readonly queue?: JobQueueSettings;
  /** How long a stop waits for running jobs before abandoning them (they are redelivered). Default 30 s. */
  readonly stopGraceMs?: number;
  readonly log?: (line: string) => void;
}

export interface RunningWorker {
  /** Jobs finished (result published and acked). */
  readonly completed: number;
  /** Stop taking jobs, let running ones finish (up to the grace), nak the rest, then drain. */
  stop(): Promise<void>;
  /** Resolves when the worker has stopped (after stop(), or when the connection closed). */
  readonly stopped: Promise<void>;
}

type Job = OcclusionJob | GenerationJob | LikelihoodJob | RerankJob | EmbedJob;

/** What a generator context runs; a re-ranker context runs RERANK_KINDS. */
export const GENERATOR_KINDS: readonly JobKind[] = ["occlusion", "generation", "likelihood"];
export const RERANK_KINDS: readonly JobKind[] = ["rerank"];
/** What an embedder context runs (`attr-rag worker --embedder`). */
export const EMBED_KINDS: readonly JobKind[] = ["embed"];

/** Per kind: how its job is read, run and answered. Every kind runs on the same engine as in-process. */
const KINDS = {
  occlusion: {
    decode: (b: Uint8Array): Job => OcclusionJob.decode(b),
    run: async (e: EngineContext, job: Job, onProgress: (p: JobProgress) => void, signal: AbortSignal, id: string) =>
      OcclusionResult.encode(await runOcclusionJob(e, job as OcclusionJob, onProgress, signal, id)).finish(),
    failed: (base: Partial<OcclusionResult>) => OcclusionResult.encode(OcclusionResult.fromPartial(base)).finish(),
  },
  generation: {
    decode: (b: Uint8Array): Job => GenerationJob.decode(b),
    run: async (e: EngineContext, job: Job, onProgress: (p: JobProgress) => void, signal: AbortSignal, id: string) =>
      GenerationResult.encode(await runGenerationJob(e, job as GenerationJob, onProgress, signal, id)).finish(),
    failed: (base: Partial<GenerationResult>) => GenerationResult.encode(GenerationResult.fromPartial(base)).finish(),
  },
  likelihood: {
    decode: (b: Uint8Array): Job => LikelihoodJob.decode(b),
    run: async (e: EngineContext, job: Job, _onProgress: (p: JobProgress) => void, signal: AbortSignal, id: string) =>
      LikelihoodResult.encode(await runLikelihoodJob(e, job as LikelihoodJob, signal, id)).finish(),
    failed: (base: Partial<LikelihoodResult>) => LikelihoodResult.encode(LikelihoodResult.fromPartial(base)).finish(),
  },
  rerank: {
    decode: (b: Uint8Array): Job => RerankJob.decode(b),
    run: async (e: EngineContext, job: Job, _onProgress: (p: JobProgress) => void, signal: AbortSignal, id: string) =>
      RerankResult.encode(await runRerankJob(e, job as RerankJob, signal, id)).finish(),
    failed: (base: Partial<RerankResult>) => RerankResult.encode(RerankResult.fromPartial(base)).finish(),
  },
  embed: {
    decode: (b: Uint8Array): Job => EmbedJob.decode(b),
    run: async (e: EngineContext, job: Job, _onProgress: (p: JobProgress) => void, signal: AbortSignal, id: string) =>
      EmbedResult.encode(await runEmbedJob(e, job as EmbedJob, signal, id)).finish(),
    failed: (base: Partial<EmbedResult>) => EmbedResult.encode(EmbedResult.fromPartial(base)).finish(),
  },
} as const satisfies Record<JobKind, unknown>;

const isJobKind = (kind: string): kind is JobKind => Object.hasOwn(KINDS, kind);

const HOW_TO_SERVE: Record<JobKind, string> = {
  occlusion: "name a generator model id",
  generation: "name a generator model id",
  likelihood: "name a generator model id",
  rerank: "start a worker with --reranker for that id",
  embed: "start a worker with --embedder for that embedder",
};

export async function startWorker(o: WorkerOptions): Promise<RunningWorker> {
  const log = o.log ?? lineLog("worker");
  const queue = o.queue ?? DEFAULT_JOB_QUEUE;
  const jsm = await jetstreamManager(o.nc);
  await ensureJobStreams(jsm, queue);
  for (const lane of JOB_LANES) await ensureWorkerConsumer(jsm, o.modelId, queue, lane);
  const js = jetstream(o.nc);
  const lanes = {
    interactive: await js.consumers.get(JOBS_STREAM, workerConsumer(o.modelId, "interactive")),
    batch: await js.consumers.get(JOBS_STREAM, workerConsumer(o.modelId, "batch")),
  };
  const concurrency = o.concurrency ?? 1;
  const served = o.kinds ?? GENERATOR_KINDS;
  const running = new Map<JsMsg, AbortController>();
  let completed = 0;
  let stopping = false;
  let slots = concurrency;
  const freed: (() => void)[] = [];
  let pulling: { close(): Promise<void | Error> } | undefined;

  const handle = async (m: JsMsg) => {
    const kind = m.subject.split(".")[3] ?? "";
    const headerId = m.headers?.get("Nats-Msg-Id") ?? "";
    const attempt = m.info.deliveryCount;
    const dead = (reason: string) =>
      js.publish(deadLetterSubject(isJobKind(kind) ? kind : "unknown"), DeadLetter.encode({ jobId: headerId, subject: m.subject, deliveries: attempt, reason, payload: m.data }).finish(), {
        msgID: `dead-${headerId || m.seq}`,
      });
    if (!isJobKind(kind)) {
      log(`worker ${o.workerId}: ${m.subject}: ${kind} jobs are not served by this worker; moved to the dead letters`);
      await dead(`unsupported job kind ${kind}`);
      m.ack(); // dead-lettered: off the work queue (a termed message would stay in it)
      return;
    }
    let job: Job;
    try {
      job = KINDS[kind].decode(m.data);
      if (job.jobId === "" || job.jobId !== headerId) throw new Error(`job_id ${JSON.stringify(job.jobId)} does not match the message id ${JSON.stringify(headerId)}`);
    } catch (err) {
      const reason = `undecodable ${kind} job: ${(err as Error).message}`;
      log(`worker ${o.workerId}: ${reason}; moved to the dead letters`);
      await dead(reason);
      if (headerId !== "") publishError(headerId, kind, { code: JobErrorCode.JOB_ERROR_CODE_INVALID_ARGUMENT, message: `the worker could not read the job: ${reason}`, retryable: false });
      m.ack();
      return;
    }
    if (!served.includes(kind)) {
      publishError(job.jobId, kind, {
        code: JobErrorCode.JOB_ERROR_CODE_INVALID_ARGUMENT,
        message: `worker ${o.workerId} serves ${served.join(", ")} jobs for ${o.modelId}, not ${kind} jobs; ${HOW_TO_SERVE[kind]}`,
        retryable: false,
      });
      m.ack();
      return;
    }
    if (job.model !== undefined && job.model !== o.modelId) {
      publishError(job.jobId, kind, { code: JobErrorCode.JOB_ERROR_CODE_MODEL_MISMATCH, message: `the job is for model ${job.model}; this worker serves ${o.modelId}`, retryable: false });
      m.ack();
      return;
    }

    const abort = new AbortController();
    running.set(m, abort);
    let cause: "cancel" | "deadline" | undefined;
    const cancelSub = o.nc.subscribe(jobCancelSubject(job.jobId), {
      max: 1,
      callback: () => {
        cause ??= "cancel";
        abort.abort(new AbortError("the job was cancelled by its caller"));
      },
    });
    const untilDeadline = job.deadlineUnixMs > 0 ? Number(job.deadlineUnixMs) - Date.now() : Infinity;
    const deadline = Number.isFinite(untilDeadline)
      ? setTimeout(() => {
          cause ??= "deadline";
          abort.abort(new AbortError("the job's deadline passed"));
        }, Math.max(0, untilDeadline))
      : undefined;
    const heartbeat = setInterval(() => m.working(), Math.max(100, Math.floor(queue.ackWaitMs / 3)));
    const onProgress = (p: JobProgress) => {
      if ("streamProgress" in job && job.streamProgress) o.nc.publish(jobProgressSubject(job.jobId), JobProgress.encode({ ...p, workerId: o.workerId, attempt }).finish());
    };
    try {
      // The job runs in the trace its publisher carried in the message headers (traceparent).
      const received = extractTrace(m.headers);
      const attributes = { "messaging.system": "nats", "messaging.destination.name": m.subject, "attr_rag.worker.id": o.workerId, "attr_rag.job.attempt": attempt };
      const fields = { job_id: job.jobId, ...("requestId" in job && job.requestId ? { request_id: job.requestId } : {}) };
      const result = await withLogFields(fields, () =>
        inSpan(
          `nats.job ${kind}`,
          attributes,
          () => {
            log(`worker ${o.workerId}: running ${kind} job ${job.jobId} (attempt ${attempt}, request ${job.requestId || "-"})`);
            return KINDS[kind].run(o.engine, job, onProgress, abort.signal, o.workerId);
          },
          { parent: received, kind: SpanKind.CONSUMER },
        ),
      );
      o.nc.publish(jobResultSubject(job.jobId), result);
      await o.nc.flush();
      m.ack();
      completed++;
      log(`worker ${o.workerId}: finished ${kind} job ${job.jobId}`);
    } catch (err) {
      if (err instanceof JobFailure) {
        publishError(job.jobId, kind, err.toProto());
        if (err.retryable) m.nak();
        else m.ack();
      } else if (err instanceof AbortError && cause !== undefined) {
        // Abandoned on purpose: its KV sequences were freed by the engine; nobody wants a redelivery.
        log(`worker ${o.workerId}: ${cause === "cancel" ? "cancelled" : "deadline passed for"} ${kind} job ${job.jobId}; KV sequences in use ${o.engine.sequencesInUse()}`);
        publishError(job.jobId, kind, {
          code: cause === "cancel" ? JobErrorCode.JOB_ERROR_CODE_CANCELLED : JobErrorCode.JOB_ERROR_CODE_DEADLINE_EXCEEDED,
          message: cause === "cancel" ? "the job was cancelled" : "the job's deadline passed before it finished",
          retryable: false,
        });
        m.ack(); // abandoned for good: nobody waits for it any more
      } else if (err instanceof AbortError && stopping) {
        log(`worker ${o.workerId}: stopping; ${kind} job ${job.jobId} handed back to the queue`);
        m.nak();
      } else {
        // Unexpected: leave it to another delivery (another worker, or this one later); after max_deliver it
        // goes to the dead letters and the caller is told.
        log(`worker ${o.workerId}: ${kind} job ${job.jobId} failed on attempt ${attempt}: ${(err as Error)?.stack ?? String(err)}`);
        m.nak(1_000);
      }
    } finally {
      clearInterval(heartbeat);
      if (deadline !== undefined) clearTimeout(deadline);
      cancelSub.unsubscribe();
      running.delete(m);
    }
  };

  const publishError = (jobId: string, kind: JobKind, error: JobError) => {
    o.nc.publish(jobResultSubject(jobId), KINDS[kind].failed({ jobId, requestId: "", workerId: o.workerId, model: o.modelId, error }));
  };

  // One job per free slot, fetched when the slot frees: nothing is prefetched, so a busy worker never sits
  // on a job an idle one could run (and whose ack_wait would run out while it waits).
  const fetchOne = async (consumer: Consumer, expires: number): Promise<JsMsg | undefined> => {
    const messages = await consumer.fetch({ max_messages: 1, expires });
    pulling = messages;
    try {
      for await (const m of messages) return m;
      return undefined;
    } finally {
      pulling = undefined;
    }
  };
  // Interactive jobs first: a batch job is pulled only when no interactive one waits, so a person's Ask never
  // queues behind a pipeline's batch (it waits at most for the jobs already running). With both lanes empty
  // the worker waits on the interactive lane, and on the batch lane one round in four: a job redelivered
  // after a crash is not counted as pending, so only a pull finds it.
  let idleRounds = 0;
  const nextJob = async (): Promise<JsMsg | undefined> => {
    const [interactive, batch] = await Promise.all([lanes.interactive.info(), lanes.batch.info()]);
    if (interactive.num_pending > 0) return fetchOne(lanes.interactive, 1_000);
    if (batch.num_pending > 0) return fetchOne(lanes.batch, 1_000);
    idleRounds++;
    return fetchOne(idleRounds % 4 === 0 ? lanes.batch : lanes.interactive, 2_000);
  };

  const unregisterEngine = engineSources.add({ engine: o.engine, model: o.modelId });
  const stopped = (async () => {
    const inFlight = new Set<Promise<void>>();
    while (!stopping) {
      while (slots === 0 && !stopping) await new Promise<void>((resolve) => freed.push(resolve));
      if (stopping) break;
      let m: JsMsg | undefined;
      try {
        m = await nextJob();
      } catch (err) {
        if (stopping || o.nc.isClosed()) break;
        log(`worker ${o.workerId}: cannot pull jobs (${(err as Error).message}); retrying`);
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      if (m === undefined) continue;
      if (stopping) {
        m.nak();
        break;
      }
      slots--;
      const work = handle(m)
        .catch((err: unknown) => log(`worker ${o.workerId}: ${(err as Error)?.stack ?? String(err)}`))
        .finally(() => {
          slots++;
          inFlight.delete(work);
          freed.shift()?.();
        });
      inFlight.add(work);
    }
    await Promise.all(inFlight);
  })();

  // Its own NATS service, so anyone may ask any worker what it runs and what KV it holds ($SRV.STATS too).
  const stats = (): WorkerStats =>
    engineWorkerStats(o.engine, { workerId: o.workerId, model: o.modelId, slots: concurrency, runningJobs: running.size, completedJobs: completed });
  const serviceInfo = workerNatsService(o.workerId);
  const service = await serveService(
    o.nc,
    serviceInfo,
    [{ endpoint: serviceInfo.endpoints.stats, request: GetWorkerStatsRequest, response: WorkerStats, handle: async () => stats() }],
    (err) => ({ code: Code.INTERNAL, message: `worker ${o.workerId}: ${(err as Error)?.message ?? String(err)}` }),
    () => WorkerStats.toJSON(stats()),
  );

  let stopping$: Promise<void> | undefined;
  return {
    get completed() {
      return completed;
    },
    stopped,
    stop() {
      stopping$ ??= (async () => {
        stopping = true;
        freed.splice(0).forEach((resolve) => resolve());
        await pulling?.close();
        const grace = new Promise<void>((resolve) => setTimeout(resolve, o.stopGraceMs ?? 30_000).unref());
        const drained = (async () => {
          while (running.size > 0) await new Promise((r) => setTimeout(r, 50));
        })();
        await Promise.race([drained, grace]);
        for (const abort of running.values()) abort.abort(new AbortError("the worker is stopping"));
        await stopped;
        unregisterEngine();
        await service.stop().catch(() => {});
      })();
      return stopping$;
    },
  };
}
