// The distributed index's embedder: texts go to the workers serving the store's embedder as EmbedJobs on the
// JetStream work queue (ingest in the batch lane, queries in the interactive one), split so that every worker
// gets a share of a large ingest; with no such worker the index's own embedder embeds them, and says so.
import { randomUUID } from "node:crypto";
import { EmbedJob, embedderToken, type JobLane } from "@attr-rag/contracts";
import { Code, RemoteError, type NatsConnection } from "@attr-rag/nats";
import type { NatsEngine } from "./natsEngine.js";
import { lineLog } from "@attr-rag/telemetry";
import { someWorkerServes } from "./workerStats.js";

/** The index's own embedder (the index's Embedder, structurally): the fallback, and what this one presents as. */
export interface LocalEmbedder extends AsyncDisposable {
  readonly id: string;
  readonly dimensions: number;
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>;
  dispose(): Promise<void>;
}

/**
 * Texts per job: a store embeds its chunks 64 at a time (embedBatchSize), so 8 per job lets 8 workers share
 * each call; on a GPU 8 chunks of up to 512 tokens are still one full batch.
 */
const JOB_TEXTS = 8;
/** How long the jobs of one call may take, queueing included, before the index embeds the texts itself. */
const JOB_TIMEOUT_MS = 120_000;
/** Text bytes per job at most, well under NATS's default max_payload (1 MiB) however long the chunks. */
const JOB_BYTES = 256 * 1024;
/** How long an answer to "does a worker serve this embedder?" is trusted before it is asked again. */
const PRESENCE_TTL_MS = 15_000;

export class WorkerEmbedder implements LocalEmbedder {
  readonly id: string;
  readonly dimensions: number;
  /** The embedder's subject token: the model token of its jobs and of its workers' consumers. */
  readonly token: string;
  #present: { value: boolean; until: number } = { value: false, until: 0 };
  #reported: boolean | undefined;

  constructor(
    private readonly local: LocalEmbedder,
    private readonly engine: NatsEngine,
    private readonly nc: NatsConnection,
    private readonly log: (line: string) => void = lineLog("embedder"),
    private readonly statsWaitMs = 500,
  ) {
    this.id = local.id;
    this.dimensions = local.dimensions;
    this.token = embedderToken(local.id);
  }

  async embed(texts: readonly string[], signal?: AbortSignal, lane: JobLane = "interactive"): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    if (!(await this.#workerServes())) return this.local.embed(texts, signal);
    const timeout = AbortSignal.timeout(JOB_TIMEOUT_MS);
    try {
      return await this.#onWorkers(texts, signal === undefined ? timeout : AbortSignal.any([signal, timeout]), lane);
    } catch (err) {
      if (signal?.aborted) throw err;
      // NATS unreachable, or no worker took the jobs in time (they went away after the last look): the texts
      // are embedded here rather than the caller failing, and the workers are looked for again later.
      const unreachable = err instanceof RemoteError && err.code === Code.UNAVAILABLE;
      if (!unreachable && !timeout.aborted) throw err;
      this.#present = { value: false, until: Date.now() + PRESENCE_TTL_MS };
      this.#reported = false;
      this.log(
        `attr-rag: warning: embed jobs for ${this.id} ${unreachable ? "could not reach the workers" : `were not answered within ${JOB_TIMEOUT_MS / 1000} s`} ` +
          `(${(err as Error).message}); the index embeds in its own process until a worker serves the embedder again`,
      );
      return this.local.embed(texts, signal);
    }
  }

  async #onWorkers(texts: readonly string[], signal: AbortSignal, lane: JobLane): Promise<Float32Array[]> {
    const jobs = splitTexts(texts);
    const deadlineUnixMs = Date.now() + JOB_TIMEOUT_MS;
    const results = await Promise.all(
      jobs.map((part) => this.engine.embed(EmbedJob.fromPartial({ jobId: `emb-${randomUUID()}`, model: this.token, embedder: this.id, texts: part, deadlineUnixMs }), signal, lane)),
    );
    const out: Float32Array[] = [];
    results.forEach((r, j) => {
      const n = jobs[j]!.length;
      if (r.embedder !== this.id || r.dimensions !== this.dimensions || r.values.length !== n * this.dimensions) {
        throw new Error(
          `worker ${r.workerId} answered an embed job of ${n} texts for ${this.id} (${this.dimensions} dimensions) with ${r.values.length} values of ${r.dimensions} dimensions from ${r.embedder}`,
        );
      }
      const values = Float32Array.from(r.values);
      for (let i = 0; i < n; i++) out.push(values.slice(i * r.dimensions, (i + 1) * r.dimensions));
    });
    return out;
  }

  async dispose(): Promise<void> {
    await this.local.dispose();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dispose();
  }

  async #workerServes(): Promise<boolean> {
    if (Date.now() >= this.#present.until) {
      const value = await someWorkerServes(this.nc, this.token, this.statsWaitMs).catch(() => false);
      this.#present = { value, until: Date.now() + PRESENCE_TTL_MS };
      if (value !== this.#reported) {
        this.log(
          value
            ? `attr-rag: embedding on the workers serving ${this.id}`
            : `attr-rag: warning: no worker serves the embedder ${this.id}, so the index embeds in its own process; ` +
                `start workers with \`attr-rag worker --embedder <the store's GGUF embedder> --nats URL\` to embed where the compute is`,
        );
        this.#reported = value;
      }
    }
    return this.#present.value;
  }
}

/** Consecutive runs of at most JOB_TEXTS texts and JOB_BYTES bytes (a longer text is a job of its own). */
export function splitTexts(texts: readonly string[]): string[][] {
  const jobs: string[][] = [];
  let bytes = 0;
  for (const text of texts) {
    const size = Buffer.byteLength(text, "utf8");
    const last = jobs.at(-1);
    if (last === undefined || last.length >= JOB_TEXTS || bytes + size > JOB_BYTES) {
      jobs.push([text]);
      bytes = size;
    } else {
      last.push(text);
      bytes += size;
    }
  }
  return jobs;
}
