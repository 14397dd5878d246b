/**
 * Live objects a scrape reads from (an admission queue, an engine context, a store), registered while they
 * exist. A gauge's collect() asks every registered source, so the figures are read where GetCluster reads them
 * instead of being copied into a second set of counters that could drift.
 */
export class MetricSources<T> {
  readonly #items = new Set<T>();
  #registered = false;

  /**
   * `register` creates the metrics that read these sources, on the first add: a process exports only the
   * metrics of the roles it runs (a worker has no admission queue to report).
   */
  constructor(private readonly register: () => void = () => {}) {}

  /** Adds `item`; the returned function removes it (call it when the item is disposed). */
  add(item: T): () => void {
    if (!this.#registered) {
      this.#registered = true;
      this.register();
    }
    this.#items.add(item);
    return () => this.#items.delete(item);
  }

  get items(): readonly T[] {
    return [...this.#items];
  }
}
