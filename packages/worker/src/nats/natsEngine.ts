// The engine as the distributed gateway reaches it: each job is published once to the work queue (its id is
// the JetStream de-duplication key), its progress and its one result come back on the job's own subjects.
// A cancel reaches the worker running the job; a lost connection ends the wait at once (UNAVAILABLE); a job
// that failed on every delivery is moved to the dead letters and its caller told.
import { injectTrace, inSpan, lineLog, SpanKind } from "@attr-rag/telemetry";
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
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
  jobSubject,
  type JobError,
  type JobKind,
  type JobLane,
} from "@attr-rag/contracts";
import { Code, DEFAULT_JOB_QUEUE, ensureJobStreams, RemoteError, type ConnectionWatch, type JobQueueSettings, type NatsConnection, type ProtoCodec, natsHeaders } from "@attr-rag/nats";
import type { EngineJobs, ProgressListener } from "../engineJobs.js";
import { JobFailure } from "../jobFailure.js";

interface MaxDeliveriesAdvisory {
  stream: string;
  consumer: string;
  stream_seq: number;
  deliveries: number;
}

export class NatsEngine implements EngineJobs {
  readonly #waiters = new Map<string, (err: Error) => void>();
  /** Stream sequence of each job this process waits for: a dead letter another process moved is still ours to answer. */
  readonly #jobAtSeq = new Map<number, string>();
  /** Jobs given up while NATS was unreachable: cancelled and taken off the queue once it is back. */
  readonly #abandoned = new Map<string, number | undefined>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly watch: ConnectionWatch,
    private readonly log: (line: string) => void,
  ) {}

  /** Ensures the job streams exist and starts watching for jobs that exhausted their deliveries. */
  static async connect(nc: NatsConnection, watch: ConnectionWatch, options: { queue?: JobQueueSettings; log?: (line: string) => void } = {}): Promise<NatsEngine> {
    const jsm = await jetstreamManager(nc);
    await ensureJobStreams(jsm, options.queue ?? DEFAULT_JOB_QUEUE);
    const engine = new NatsEngine(nc, jetstream(nc), jsm, watch, options.log ?? lineLog("engine-jobs"));
    void (async () => {
      for await (const s of nc.status()) if (s.type === "reconnect") engine.#forgetAbandoned();
    })();
    nc.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${JOBS_STREAM}.*`, {
      callback: (err, msg) => {
        if (!err) void engine.#deadLetter(msg.json<MaxDeliveriesAdvisory>()).catch((e: unknown) => engine.log(`dead letters: ${(e as Error).message}`));
      },
    });
    return engine;
  }

  occlude(job: OcclusionJob, onProgress: ProgressListener, signal: AbortSignal): Promise<OcclusionResult> {
    return this.#occlude(job, onProgress, signal, "interactive");
  }

  generate(job: GenerationJob, onProgress: ProgressListener, signal: AbortSignal): Promise<GenerationResult> {
    return this.#generate(job, onProgress, signal, "interactive");
  }

  likelihood(job: LikelihoodJob, signal: AbortSignal): Promise<LikelihoodResult> {
    return this.#likelihood(job, signal, "interactive");
  }

  /**
   * A re-rank job for the re-ranker `job.model` (workers started with --reranker for that id), in `lane`.
   * Same queue, cancel, redelivery and dead-letter rules as the other kinds.
   */
  rerank(job: RerankJob, signal: AbortSignal, lane: JobLane = "interactive"): Promise<RerankResult> {
    return this.#run("rerank", job.jobId, job.model, RerankJob.encode(job).finish(), RerankResult, () => {}, signal, lane);
  }

  /** An embed job for the embedder whose token is `job.model` (workers started with --embedder), in `lane`. */
  embed(job: EmbedJob, signal: AbortSignal, lane: JobLane = "interactive"): Promise<EmbedResult> {
    return this.#run("embed", job.jobId, job.model, EmbedJob.encode(job).finish(), EmbedResult, () => {}, signal, lane);
  }

  /** The same engine queueing its jobs in `lane`: workers take a batch job only when no interactive one waits. */
  inLane(lane: JobLane): EngineJobs {
    return {
      occlude: (job, onProgress, signal) => this.#occlude(job, onProgress, signal, lane),
      generate: (job, onProgress, signal) => this.#generate(job, onProgress, signal, lane),
      likelihood: (job, signal) => this.#likelihood(job, signal, lane),
    };
  }

  #occlude(job: OcclusionJob, onProgress: ProgressListener, signal: AbortSignal, lane: JobLane): Promise<OcclusionResult> {
    return this.#run("occlusion", job.jobId, job.model, OcclusionJob.encode(job).finish(), OcclusionResult, onProgress, signal, lane);
  }

  #generate(job: GenerationJob, onProgress: ProgressListener, signal: AbortSignal, lane: JobLane): Promise<GenerationResult> {
    return this.#run("generation", job.jobId, job.model, GenerationJob.encode(job).finish(), GenerationResult, onProgress, signal, lane);
  }

  #likelihood(job: LikelihoodJob, signal: AbortSignal, lane: JobLane): Promise<LikelihoodResult> {
    return this.#run("likelihood", job.jobId, job.model, LikelihoodJob.encode(job).finish(), LikelihoodResult, () => {}, signal, lane);
  }

  #run<R extends { error?: JobError | undefined }>(
    kind: JobKind,
    jobId: string,
    model: string | undefined,
    payload: Uint8Array,
    codec: ProtoCodec<R>,
    onProgress: ProgressListener,
    signal: AbortSignal,
    lane: JobLane,
  ): Promise<R> {
    const attributes = { "messaging.system": "nats", "messaging.destination.name": jobSubject(kind, model ?? "-", lane), "attr_rag.job.id": jobId, "attr_rag.job.kind": kind };
    return inSpan(`nats.job ${kind}`, attributes, () => this.#queue(kind, jobId, model, payload, codec, onProgress, signal, lane), { kind: SpanKind.PRODUCER });
  }

  async #queue<R extends { error?: JobError | undefined }>(
    kind: JobKind,
    jobId: string,
    model: string | undefined,
    payload: Uint8Array,
    codec: ProtoCodec<R>,
    onProgress: ProgressListener,
    signal: AbortSignal,
    lane: JobLane,
  ): Promise<R> {
    signal.throwIfAborted();
    if (model === undefined) throw new JobFailure(JobErrorCode.JOB_ERROR_CODE_INVALID_ARGUMENT, "a distributed job must name its model");
    if (!this.watch.connected) throw new RemoteError(Code.UNAVAILABLE, "no connection to NATS, so no worker can be reached; retrying in the background");
    // Subscribed before publishing: a fast worker's first progress and its result are never missed.
    const results = this.nc.subscribe(jobResultSubject(jobId), { max: 1 });
    const progress = this.nc.subscribe(jobProgressSubject(jobId), {
      callback: (err, msg) => {
        if (!err) onProgress(JobProgress.decode(msg.data));
      },
    });
    const lost = this.watch.lost;
    let seq: number | undefined;
    try {
      await this.nc.flush();
      return await new Promise<R>((resolve, reject) => {
        let settled = false;
        const settle = (done: () => void) => {
          if (settled) return;
          settled = true;
          signal.removeEventListener("abort", onAbort);
          lost.removeEventListener("abort", onLost);
          this.#waiters.delete(jobId);
          if (seq !== undefined) this.#jobAtSeq.delete(seq);
          done();
        };
        const onAbort = () => {
          // Tell the worker running it, and take it off the queue if nobody has it yet.
          if (this.watch.connected) {
            this.nc.publish(jobCancelSubject(jobId));
            if (seq !== undefined) void this.jsm.streams.deleteMessage(JOBS_STREAM, seq).catch(() => {});
          } else {
            this.#abandoned.set(jobId, seq);
          }
          settle(() => reject(signal.reason));
        };
        const onLost = () => {
          // Nobody waits for it any more: no worker should spend time on it once NATS is back.
          this.#abandoned.set(jobId, seq);
          settle(() => reject(new RemoteError(Code.UNAVAILABLE, `the connection to NATS was lost while ${kind} job ${jobId} ran; the request was given up (the client may retry)`)));
        };
        signal.addEventListener("abort", onAbort, { once: true });
        lost.addEventListener("abort", onLost, { once: true });
        if (lost.aborted) onLost();
        this.#waiters.set(jobId, (err) => settle(() => reject(err)));
        void (async () => {
          for await (const msg of results) {
            const result = codec.decode(msg.data);
            settle(() => (result.error !== undefined ? reject(JobFailure.fromProto(result.error)) : resolve(result)));
          }
        })().catch((err: unknown) => settle(() => reject(err)));
        // The trace goes with the job (W3C traceparent in a header), so the worker's spans join the caller's.
        const traced = natsHeaders();
        injectTrace(traced);
        this.js
          .publish(jobSubject(kind, model, lane), payload, { msgID: jobId, headers: traced })
          .then((ack) => {
            seq = ack.seq;
            if (!settled) this.#jobAtSeq.set(ack.seq, jobId);
            if (settled && signal.aborted) void this.jsm.streams.deleteMessage(JOBS_STREAM, ack.seq).catch(() => {});
          })
          .catch((err: unknown) => settle(() => reject(new RemoteError(Code.UNAVAILABLE, `cannot queue ${kind} job ${jobId} on NATS JetStream: ${(err as Error).message}`))));
      });
    } finally {
      results.unsubscribe();
      progress.unsubscribe();
    }
  }

  /** After a reconnect: the jobs given up during the outage are cancelled (if running) and deleted (if queued). */
  #forgetAbandoned(): void {
    for (const [jobId, seq] of this.#abandoned) {
      this.#abandoned.delete(jobId);
      this.nc.publish(jobCancelSubject(jobId));
      if (seq !== undefined) void this.jsm.streams.deleteMessage(JOBS_STREAM, seq).catch(() => {});
    }
  }

  /** A job that failed on every delivery: into the dead letters, off the work queue, its caller told. */
  async #deadLetter(advisory: MaxDeliveriesAdvisory): Promise<void> {
    const stored = await this.jsm.streams.getMessage(JOBS_STREAM, { seq: advisory.stream_seq }).catch(() => null);
    if (stored === null) {
      // Another process (a gateway, the index) moved it already; if it is a job this one waits for, say so here.
      const jobId = this.#jobAtSeq.get(advisory.stream_seq);
      if (jobId !== undefined) {
        this.#waiters.get(jobId)?.(new JobFailure(JobErrorCode.JOB_ERROR_CODE_INTERNAL, `job ${jobId} failed on all ${advisory.deliveries} of its deliveries; it was moved to the dead letters`));
      }
      return;
    }
    const jobId = stored.header.get("Nats-Msg-Id") ?? "";
    const kind = stored.subject.split(".")[3] as JobKind;
    const reason = `failed on all ${advisory.deliveries} of its deliveries (the workers running it crashed or failed each time)`;
    await this.js.publish(deadLetterSubject(kind ?? "unknown"), DeadLetter.encode({ jobId, subject: stored.subject, deliveries: advisory.deliveries, reason, payload: stored.data }).finish(), {
      msgID: `dead-${jobId || advisory.stream_seq}`,
    });
    await this.jsm.streams.deleteMessage(JOBS_STREAM, advisory.stream_seq).catch(() => {});
    this.log(`dead letters: ${kind} job ${jobId} ${reason}`);
    this.#waiters.get(jobId)?.(new JobFailure(JobErrorCode.JOB_ERROR_CODE_INTERNAL, `${kind} job ${jobId} ${reason}; it was moved to the dead letters (${deadLetterSubject(kind)})`));
  }
}
