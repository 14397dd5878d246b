import { BatchRunning } from "@attr-rag/contracts";
import type { KV } from "@nats-io/kv";

/** A runner repeats its markers this often; a marker older than STALE_MS belongs to a runner that is gone. */
export const MARKER_HEARTBEAT_MS = 15_000;
export const MARKER_STALE_MS = 60_000;

const markerKey = (batchId: string, runnerId: string) => `running.${batchId}.${runnerId}`;

/**
 * Which items this gateway's runner is running, per batch, kept in the bucket (`running.<batch>.<runner>`) so
 * every gateway can count a batch's running items. Only this runner writes its keys: no contention. Writes are
 * coalesced; a failed write is retried at the next change or heartbeat (the count is advisory: results are
 * the truth about what finished).
 */
export class RunningMarkers {
  readonly #running = new Map<string, Set<number>>();
  readonly #dirty = new Set<string>();
  #flushing: Promise<void> | undefined;
  readonly #heartbeat: NodeJS.Timeout;

  constructor(
    private readonly kv: KV,
    readonly runnerId: string,
    private readonly log: (line: string) => void,
  ) {
    this.#heartbeat = setInterval(() => {
      for (const batchId of this.#running.keys()) this.#dirty.add(batchId);
      this.#flush();
    }, MARKER_HEARTBEAT_MS).unref();
  }

  /** The batches this runner has items of. */
  batches(): string[] {
    return [...this.#running.keys()];
  }

  started(batchId: string, index: number): void {
    let set = this.#running.get(batchId);
    if (set === undefined) this.#running.set(batchId, (set = new Set()));
    set.add(index);
    this.#dirty.add(batchId);
    this.#flush();
  }

  ended(batchId: string, index: number): void {
    const set = this.#running.get(batchId);
    if (set === undefined || !set.delete(index)) return;
    if (set.size === 0) this.#running.delete(batchId);
    this.#dirty.add(batchId);
    this.#flush();
  }

  /** Running item indices of a batch, over every live runner. */
  static async read(kv: KV, batchId: string, nowMs = Date.now()): Promise<Set<number>> {
    const indices = new Set<number>();
    const keys = await kv.keys(`running.${batchId}.*`);
    for await (const key of keys) {
      const entry = await kv.get(key);
      if (entry === null || entry.operation !== "PUT" || entry.length === 0) continue;
      const marker = BatchRunning.decode(entry.value);
      if (nowMs - Number(marker.heartbeatUnixMs) > MARKER_STALE_MS) continue;
      for (const i of marker.indices) indices.add(i);
    }
    return indices;
  }

  async close(): Promise<void> {
    clearInterval(this.#heartbeat);
    for (const batchId of this.#running.keys()) this.#dirty.add(batchId);
    this.#running.clear();
    await this.#flush();
  }

  #flush(): Promise<void> {
    if (this.#flushing === undefined && this.#dirty.size > 0) {
      this.#flushing = this.#write().then((ok) => {
        this.#flushing = undefined;
        // A change that came in as the last write finished; after a failure, the heartbeat tries again.
        if (ok && this.#dirty.size > 0) return this.#flush();
      });
    }
    return this.#flushing ?? Promise.resolve();
  }

  /** Writes dirty batches one by one until none is left; on a failure the rest wait for the next change or heartbeat. */
  async #write(): Promise<boolean> {
    while (this.#dirty.size > 0) {
      const batchId = this.#dirty.values().next().value!;
      this.#dirty.delete(batchId);
      const set = this.#running.get(batchId);
      const key = markerKey(batchId, this.runnerId);
      try {
        if (set === undefined) await this.kv.delete(key);
        else await this.kv.put(key, BatchRunning.encode({ runnerId: this.runnerId, indices: [...set], heartbeatUnixMs: Date.now() }).finish());
      } catch (err) {
        this.log(`batch runner ${this.runnerId}: cannot update its running items of batch ${batchId} (${(err as Error).message}); retrying later`);
        this.#dirty.add(batchId);
        return false;
      }
    }
    return true;
  }
}
