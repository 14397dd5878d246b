/**
 * In-process wake-ups: "something about batch X changed" (a result, a cancel, a new batch). Waiters also
 * wake after a timeout, so a missed notice (another process wrote it) costs at most that long.
 */
export class ChangeSignal {
  readonly #waiters = new Map<string, Set<() => void>>();

  /** Keys someone is waiting on now. */
  get waitingKeys(): number {
    return this.#waiters.size;
  }

  /** Wakes everyone waiting on `key` and on "*". */
  notify(key: string): void {
    for (const k of [key, "*"]) {
      const set = this.#waiters.get(k);
      if (set === undefined) continue;
      this.#waiters.delete(k);
      for (const wake of set) wake();
    }
  }

  /** Resolves on the next notify(key) (or of any key, for "*"), after timeoutMs, or when signal aborts. */
  wait(key: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      let set = this.#waiters.get(key);
      if (set === undefined) this.#waiters.set(key, (set = new Set()));
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        set.delete(done);
        // An emptied set goes too: a waiter per watched batch would otherwise leave one behind for good.
        if (set.size === 0 && this.#waiters.get(key) === set) this.#waiters.delete(key);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener("abort", done, { once: true });
      set.add(done);
    });
  }
}
