import type { NatsConnection } from "@attr-rag/nats";
import { listWorkerStats } from "@attr-rag/worker";

/** Batch items in flight per worker slot: one running on the worker, one doing retrieval or selection meanwhile. */
export const ITEMS_PER_WORKER_SLOT = 2;
export const MAX_AUTO_BATCH_CONCURRENCY = 64;

/**
 * Distributed, with no batchConcurrency configured: keep ITEMS_PER_WORKER_SLOT items in flight per slot of the
 * workers serving the model (from their stats services, asked every 10 s). Enough to keep every worker busy
 * while an item is between engine jobs, few enough that the index and selector are not flooded with batch
 * work an interactive Ask would queue behind.
 */
export class WorkerBasedConcurrency {
  #value = ITEMS_PER_WORKER_SLOT;
  readonly #timer: NodeJS.Timeout;

  constructor(
    private readonly nc: NatsConnection,
    private readonly model: string,
  ) {
    void this.#refresh();
    this.#timer = setInterval(() => void this.#refresh(), 10_000).unref();
  }

  get value(): number {
    return this.#value;
  }

  close(): void {
    clearInterval(this.#timer);
  }

  async #refresh(): Promise<void> {
    try {
      const slots = (await listWorkerStats(this.nc)).filter((w) => w.model === this.model).reduce((n, w) => n + w.slots, 0);
      this.#value = Math.max(1, Math.min(MAX_AUTO_BATCH_CONCURRENCY, ITEMS_PER_WORKER_SLOT * slots));
    } catch {
      // NATS unreachable: keep the last value; the runner's items fail over anyway.
    }
  }
}
