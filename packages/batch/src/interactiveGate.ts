import type { EngineJobs } from "@attr-rag/worker";

/**
 * Embedded mode has one engine context, so batch items and interactive Asks take turns on it. Every admitted
 * interactive call (Ask, Attribute) holds the gate open; while one does, a batch item's next engine job waits.
 * An interactive Ask therefore waits for at most the one batch job already on the engine, and no batch job
 * slips in between its own jobs (retrieval, selection and gap fill run between them).
 */
export class InteractiveGate {
  #active = 0;
  #waiters: (() => void)[] = [];

  get active(): number {
    return this.#active;
  }

  /** Batch jobs waiting for the gate now. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** An interactive call starts; the returned function ends it (repeat-safe). */
  enter(): () => void {
    this.#active++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (--this.#active === 0) for (const wake of this.#waiters.splice(0)) wake();
    };
  }

  /** Resolves once no interactive call is running (at once if none is); rejects with the signal's reason. */
  async whenIdle(signal: AbortSignal): Promise<void> {
    while (this.#active > 0) {
      signal.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        };
        // An aborted waiter leaves the list at once: behind a long interactive call they would pile up.
        const onAbort = () => {
          this.#waiters = this.#waiters.filter((w) => w !== wake);
          reject(signal.reason);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        this.#waiters.push(wake);
      });
    }
  }
}

/** The engine as batch items see it in embedded mode: each job first waits for the gate to be idle. */
export function gatedEngine(engine: EngineJobs, gate: InteractiveGate): EngineJobs {
  return {
    occlude: async (job, onProgress, signal) => {
      await gate.whenIdle(signal);
      return engine.occlude(job, onProgress, signal);
    },
    generate: async (job, onProgress, signal) => {
      await gate.whenIdle(signal);
      return engine.generate(job, onProgress, signal);
    },
    likelihood: async (job, signal) => {
      await gate.whenIdle(signal);
      return engine.likelihood(job, signal);
    },
  };
}
