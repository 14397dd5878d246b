import { Worker } from "node:worker_threads";
import { fileURLToPath } from "node:url";
import { InvalidQueryError, StoreError } from "../errors.js";
import type { SearchFilters, SearchHit } from "../types.js";
import type { Bm25Corpus } from "./bm25Corpus.js";

export interface Bm25PoolRequest {
  readonly query: string;
  readonly k: number;
  readonly filters: SearchFilters;
  readonly method: "topk" | "exhaustive";
  readonly corpus?: Bm25Corpus;
}

/**
 * The body of a BM25 search thread, started with `new Worker(source, { eval: true })` so the same code runs
 * whether the caller was loaded from `src/` (tests) or `dist/`: it imports the built reader module
 * (workerData.module) and opens the store's SQLite file read-only. WAL lets any number of such readers run
 * beside the one writer; each sees the last committed state when its search starts.
 *
 * Protocol: `{ id, query, k, filters, method, atVersion? }` → `{ id, hits, version? }` or `{ id, error: { name, message } }`.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { pathToFileURL } = require("node:url");
const reader = import(pathToFileURL(workerData.module).href).then((m) => m.openBm25Reader(workerData.sqlite));
reader.catch(() => undefined);
parentPort.on("message", async ({ id, query, k, filters, method, corpus, atVersion }) => {
  try {
    const r = await reader;
    parentPort.postMessage(atVersion ? { id, ...r.searchAtVersion(query, k, filters, method, corpus) } : { id, hits: r.search(query, k, filters, method, corpus) });
  } catch (err) {
    parentPort.postMessage({ id, error: { name: (err && err.name) || "Error", message: String((err && err.message) || err) } });
  }
});
`;

/**
 * The built reader module, from src/search or dist/search alike. Not the package's entry point: that one
 * never finishes loading on a worker thread (one of its other imports waits forever there).
 */
const MODULE = fileURLToPath(new URL("../../dist/search/bm25Reader.js", import.meta.url));

interface Answer {
  readonly hits: SearchHit[];
  readonly version?: number;
}

type Message = { id: number; hits?: SearchHit[]; version?: number; error?: { name: string; message: string } };

interface Slot {
  readonly worker: Worker;
  busy: number;
}

/**
 * BM25 searches on worker threads, so a search never holds up the process's event loop (gRPC and NATS
 * requests, ingest) and searches run in parallel, one per thread. Requests go to the least busy thread.
 */
export class Bm25Pool {
  readonly #slots: Slot[];
  readonly #pending = new Map<number, { resolve: (answer: Answer) => void; reject: (err: Error) => void; slot: Slot }>();
  #nextId = 1;
  #closed = false;

  constructor(sqlitePath: string, threads: number) {
    if (!Number.isInteger(threads) || threads < 1) throw new StoreError(`search threads must be an integer ≥ 1, got ${threads}`);
    this.#slots = Array.from({ length: threads }, () => {
      const slot: Slot = { worker: new Worker(WORKER_SOURCE, { eval: true, workerData: { module: MODULE, sqlite: sqlitePath } }), busy: 0 };
      slot.worker.on("message", (m: Message) => this.#settle(m));
      slot.worker.on("error", (err) => this.#failAll(slot, err));
      slot.worker.on("exit", (code) => this.#failAll(slot, new StoreError(`a BM25 search thread exited (code ${code})`)));
      slot.worker.unref();
      return slot;
    });
  }

  get threads(): number {
    return this.#slots.length;
  }

  async search(request: Bm25PoolRequest): Promise<SearchHit[]> {
    return (await this.#send(request, false)).hits;
  }

  /** search, with the store's applied ingest log sequence read in the thread's same snapshot. */
  async searchAtVersion(request: Bm25PoolRequest): Promise<{ hits: SearchHit[]; version: number }> {
    const { hits, version } = await this.#send(request, true);
    return { hits, version: version ?? 0 };
  }

  #send(request: Bm25PoolRequest, atVersion: boolean): Promise<Answer> {
    if (this.#closed) return Promise.reject(new StoreError("the BM25 search threads are closed"));
    const slot = this.#slots.reduce((best, s) => (s.busy < best.busy ? s : best));
    const id = this.#nextId++;
    slot.busy++;
    if (slot.busy === 1) slot.worker.ref();
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, slot });
      slot.worker.postMessage({ id, ...request, atVersion });
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all(this.#slots.map((s) => s.worker.terminate()));
  }

  #settle(m: Message): void {
    const p = this.#pending.get(m.id);
    if (p === undefined) return;
    this.#pending.delete(m.id);
    if (--p.slot.busy === 0) p.slot.worker.unref();
    if (m.error !== undefined) {
      // A bad query stays a bad query (INVALID_ARGUMENT), whichever thread found it.
      const err = m.error.name === "InvalidQueryError" ? new InvalidQueryError(m.error.message) : new StoreError(m.error.message);
      err.name = m.error.name;
      p.reject(err);
    } else p.resolve({ hits: m.hits ?? [], ...(m.version !== undefined ? { version: m.version } : {}) });
  }

  #failAll(slot: Slot, err: Error): void {
    for (const [id, p] of this.#pending) {
      if (p.slot !== slot) continue;
      this.#pending.delete(id);
      p.reject(this.#closed ? new StoreError("the BM25 search threads are closed") : err);
    }
    slot.busy = 0;
  }
}
