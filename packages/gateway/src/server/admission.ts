import { status } from "@grpc/grpc-js";
import { ServiceError } from "@attr-rag/index";

/**
 * Bounded admission for expensive calls: up to `maxRunning` at once, up to `maxQueued` waiting in FIFO
 * order, and anything beyond is refused at once with RESOURCE_EXHAUSTED instead of piling up. A waiter
 * whose call is cancelled leaves the queue.
 */
export class Admission {
  #running = 0;
  readonly #waiting: { grant: () => void; fail: (err: unknown) => void }[] = [];

  constructor(
    readonly maxRunning: number,
    readonly maxQueued: number,
  ) {}

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  /** Resolves with a release function once the call may run. */
  async acquire(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    if (this.#running < this.maxRunning) return this.#grant();
    if (this.#waiting.length >= this.maxQueued) {
      throw new ServiceError(
        status.RESOURCE_EXHAUSTED,
        `the server is busy: ${this.#running} asks running and ${this.#waiting.length} queued (limit ${this.maxQueued}); retry later`,
      );
    }
    await new Promise<void>((resolve, reject) => {
      const entry = {
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
        fail: reject,
      };
      const onAbort = () => {
        const at = this.#waiting.indexOf(entry);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(entry);
    });
    return this.#grant(true);
  }

  #grant(alreadyCounted = false): () => void {
    if (!alreadyCounted) this.#running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next.grant();
      else this.#running--;
    };
  }
}
