// The cross-encoder behind the RerankBackend seam, in this process or on the workers: both run the same
// RerankJob through runRerankJob (truncating as the embedded gateway always has), so a question gets the same
// scores, sets and answer however the gateway is deployed.
import { RerankJob } from "@attr-rag/contracts";
import type { EngineContext } from "@attr-rag/engine";
import { Code, RemoteError, type NatsConnection } from "@attr-rag/nats";
import { runRerankJob, someWorkerServes, type NatsEngine } from "@attr-rag/worker";
import type { JobLane } from "@attr-rag/contracts";
import { newJobId } from "../pipeline/engineCalls.js";
import type { RerankBackend } from "./Backends.js";

function rerankJob(id: string, query: string, texts: readonly string[]): RerankJob {
  return RerankJob.fromPartial({ jobId: newJobId("rrk"), model: id, query, texts: [...texts], truncate: true });
}

/** Embedded: the re-ranker's own context in this process. */
export function localReranker(id: string, context: EngineContext): RerankBackend {
  return {
    id,
    rerank: async (question, texts, signal) => (await runRerankJob(context, rerankJob(id, question, texts), signal)).scores,
  };
}

/** How long a worker seen serving the re-ranker counts as present before it is looked for again. */
const PRESENCE_TTL_MS = 15_000;

/**
 * Distributed: rerank jobs on the JetStream work queue for the workers serving re-ranker `id`. Before a job
 * is queued, some worker must be serving that id (asked through the workers' $SRV.STATS, remembered a
 * while), else the call fails at once with UNAVAILABLE naming the id — it never waits for a worker that is
 * not there, and never falls back to another ranking.
 */
export class NatsReranker implements RerankBackend {
  #seenUntil = 0;

  constructor(
    readonly id: string,
    private readonly engine: NatsEngine,
    private readonly nc: NatsConnection,
    private readonly lane: JobLane = "interactive",
    private readonly statsWaitMs = 500,
  ) {}

  /** The same re-ranker, its jobs queued in `lane`. */
  inLane(lane: JobLane): NatsReranker {
    return new NatsReranker(this.id, this.engine, this.nc, lane, this.statsWaitMs);
  }

  async rerank(question: string, texts: readonly string[], signal: AbortSignal): Promise<number[]> {
    if (texts.length === 0) return [];
    await this.#requireWorker();
    signal.throwIfAborted();
    return (await this.engine.rerank(rerankJob(this.id, question, texts), signal, this.lane)).scores;
  }

  async #requireWorker(): Promise<void> {
    if (Date.now() < this.#seenUntil) return;
    if (!(await someWorkerServes(this.nc, this.id, this.statsWaitMs).catch(() => false))) {
      throw new RemoteError(
        Code.UNAVAILABLE,
        `no worker serves the re-ranker "${this.id}": start one with \`attr-rag worker --reranker R.gguf --reranker-id ${this.id} --nats URL\`, or serve without --reranker (bi-encoder ranking)`,
      );
    }
    this.#seenUntil = Date.now() + PRESENCE_TTL_MS;
  }
}
