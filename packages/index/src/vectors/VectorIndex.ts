import { availableParallelism } from "node:os";
import usearch from "usearch";
import type { HnswParams } from "../sqlite/storeConfig.js";
import type { VectorQuantization } from "../types.js";

const { Index, MetricKind, ScalarKind } = usearch;

/**
 * When add() inserts on more than one thread. Two threads, not every core: searches run beside ingest, and
 * on the two-core machines we measure on, two is all there is.
 */
const PARALLEL_ADD = { minIndex: 10_000, minBatch: 32, threads: Math.min(2, availableParallelism()) };

/**
 * Up to this many vectors a search scores every vector the graph reaches (the ranking is then exact, bar a
 * vector HNSW left unreachable: 3 of 20,000 random ones in a probe). Measured on 512-d f16 vectors, one
 * thread: 0.6 ms at 2,000 vectors, 2.0 ms at 5,000, 7.0 ms at 10,000 (HNSW's own search: ~0.1 ms).
 */
export const EXHAUSTIVE_SEARCH_MAX = 4_096;

export interface VectorIndexConfig {
  readonly dimensions: number;
  readonly quantization: VectorQuantization;
  readonly hnsw: HnswParams;
}

export interface VectorMatch {
  /** Chunk rowid. */
  readonly key: number;
  /** Cosine similarity, 1 − usearch's cosine distance. */
  readonly similarity: number;
}

/**
 * The usearch HNSW index in memory, keyed by chunk rowid. Knows nothing about SQLite or files beyond
 * load/save; the store decides when those happen. All calls are synchronous (usearch's JS API is).
 */
export class VectorIndex {
  readonly #index: InstanceType<typeof Index>;

  private constructor(readonly config: VectorIndexConfig) {
    // All seven fields explicitly: usearch fills omitted ones with defaults that may change between versions.
    this.#index = new Index({
      dimensions: config.dimensions,
      metric: MetricKind.Cos,
      quantization: config.quantization === "f16" ? ScalarKind.F16 : ScalarKind.F32,
      connectivity: config.hnsw.connectivity,
      expansion_add: config.hnsw.expansionAdd,
      expansion_search: config.hnsw.expansionSearch,
      multi: false,
    });
  }

  static empty(config: VectorIndexConfig): VectorIndex {
    return new VectorIndex(config);
  }

  /**
   * Loads a saved index. The caller must have verified the file (checksum): usearch aborts the whole
   * process on a truncated or garbled file instead of throwing. Throws if the file's shape differs.
   */
  static load(path: string, config: VectorIndexConfig): VectorIndex {
    const vectors = new VectorIndex(config);
    vectors.#index.load(path);
    // usearch adopts the file's dimensions silently; a file of another shape is not ours.
    if (vectors.#index.dimensions() !== config.dimensions) {
      throw new Error(`the vector file has ${vectors.#index.dimensions()} dimensions, the store ${config.dimensions}`);
    }
    return vectors;
  }

  get size(): number {
    return this.#index.size();
  }

  /**
   * Adds vectors under new keys (a key already present is a caller bug: usearch rejects duplicates).
   * One thread while the graph is small: concurrent insertion of a batch left some nodes unreachable in small
   * graphs (a search for every vector of a 79-vector index returned 77), and one thread makes the graph
   * reproducible. In a large graph insertion is most of ingest's cost and grows with the graph, so a large
   * batch into a large graph is inserted on two threads (1.2× the store's whole ingest at 40 k chunks).
   */
  add(keys: readonly number[], vectors: readonly Float32Array[]): void {
    if (keys.length === 0) return;
    const flat = new Float32Array(keys.length * this.config.dimensions);
    vectors.forEach((v, i) => flat.set(v, i * this.config.dimensions));
    const ids = toKeys(keys);
    // Every call names the same thread count: usearch sizes its per-thread state when it grows, from the count
    // of the call that made it grow, and a later call with more threads than that fails. One thread is then
    // one vector per call (a lone task runs on one thread, in order, as a one-thread batch would).
    if (PARALLEL_ADD.threads > 1 && (this.size < PARALLEL_ADD.minIndex || keys.length < PARALLEL_ADD.minBatch)) {
      const d = this.config.dimensions;
      for (let i = 0; i < keys.length; i++) this.#index.add(ids.subarray(i, i + 1), flat.subarray(i * d, (i + 1) * d), PARALLEL_ADD.threads);
    } else {
      this.#index.add(ids, flat, PARALLEL_ADD.threads);
    }
  }

  /** Removes the keys that are present; absent keys are ignored. Returns how many were removed. */
  remove(keys: readonly number[]): number {
    if (keys.length === 0) return 0;
    const removed = this.#index.remove(toKeys(keys)) as number | number[];
    return Array.isArray(removed) ? removed.reduce((a, b) => a + Number(b), 0) : Number(removed);
  }

  contains(keys: readonly number[]): boolean[] {
    if (keys.length === 0) return [];
    const found = this.#index.contains(toKeys(keys));
    return Array.isArray(found) ? found : [found];
  }

  /**
   * Nearest neighbours, most similar first; at most `k` (fewer when the index is smaller). Approximate (HNSW),
   * except in an index of at most EXHAUSTIVE_SEARCH_MAX vectors, where every vector the graph reaches is scored
   * (asking usearch for all of them), so a small store and the shards of a sharded one rank alike.
   */
  search(query: Float32Array, k: number): VectorMatch[] {
    const n = Math.min(k, this.size);
    if (n === 0) return [];
    const matches = this.#index.search(query, this.size <= EXHAUSTIVE_SEARCH_MAX ? this.size : n, 0);
    const found = Math.min(n, matches.keys.length);
    return Array.from({ length: found }, (_, i) => ({ key: Number(matches.keys[i]!), similarity: 1 - matches.distances[i]! }));
  }

  save(path: string): void {
    this.#index.save(path);
  }
}

function toKeys(keys: readonly number[]): BigUint64Array {
  return BigUint64Array.from(keys, (k) => BigInt(k));
}
