import { setMaxListeners } from "node:events";
import { status } from "@grpc/grpc-js";
import { ServiceError, type ServiceLog } from "@attr-rag/index";
import type { AskEvent, AskRequest } from "@attr-rag/contracts";
import type { GrpcStatus } from "@attr-rag/index";
import type { BatchQueue, ClaimedItem } from "./batchStore.js";
import { inSpan, linkTo, ROOT_CONTEXT, withLogFields } from "@attr-rag/telemetry";
import { batchRunners, countBatchItem, countBatchRetry } from "./metrics/batchMetrics.js";
import { CANCELLED_WHILE_RUNNING, ItemCollector } from "./itemResult.js";
import { sleep } from "./sleep.js";

export interface BatchRunnerOptions {
  readonly queue: BatchQueue;
  /**
   * Runs one item: the gateway passes its pipeline here (runAsk over a runtime whose engine queues jobs in the
   * batch lane), so a batch item is answered by the same code path as every Ask.
   */
  readonly runItem: (request: AskRequest, onEvent: (event: AskEvent) => void, signal: AbortSignal) => Promise<unknown>;
  /** The caller's error-to-status mapping (the gateway's: engine errors get their own codes). */
  readonly statusOf: (err: unknown, rpc: string, log: ServiceLog) => GrpcStatus;
  /** Items run at once by this runner: a number, or asked again every second (it may follow the workers). */
  readonly concurrency: number | (() => number);
  /** The most slots `concurrency` may ever ask for. Default: concurrency when it is a number, else 64. */
  readonly maxConcurrency?: number;
  readonly log: ServiceLog;
  /** Runs of an item that failed for reasons not its own (UNAVAILABLE) before the failure is its result. Default 5. */
  readonly maxAttempts?: number;
}

// Abort reasons, told apart by identity (ServiceErrors, so code that rethrows a signal's reason maps it to CANCELLED).
const STOPPING = new ServiceError(status.CANCELLED, "the gateway's batch runner is stopping; the item will run again");
const CANCELLED = new ServiceError(status.CANCELLED, CANCELLED_WHILE_RUNNING);
/**
 * Failures of the deployment, not of the item: the item runs again later instead of failing. A batch item has
 * no deadline of its own, so DEADLINE_EXCEEDED can only be a service (index, selector) that did not answer in time.
 */
const NOT_THE_ITEMS_FAULT = new Set<number>([status.UNAVAILABLE, status.DEADLINE_EXCEEDED]);

/**
 * Runs batch items through the same pipeline as every Ask (`runItem`): `concurrency` slots, each taking the next item from
 * the queue, recording its one result (its answer, or its own status), then the next. A cancelled batch stops
 * its running items at once (their engine jobs are cancelled and free their KV). On stop, running items are
 * handed back to the queue unfinished; the next runner (this gateway restarted, or another) runs them.
 */
export class BatchRunner {
  readonly #stop = new AbortController();
  readonly #running = new Map<string, Set<AbortController>>();
  #loops: Promise<void>[] = [];
  #unsubscribe: (() => void) | undefined;
  #unregisterMetrics: (() => void) | undefined;
  #stopped: Promise<void> | undefined;
  #completed = 0;
  /** When "cannot take the next item" was last logged: during an outage every slot fails every second. */
  #lastPullErrorLog = 0;

  constructor(private readonly o: BatchRunnerOptions) {
    // Every slot (and every item it runs) listens to the stop signal.
    setMaxListeners(0, this.#stop.signal);
  }

  /** Items this runner recorded a result for. */
  get completed(): number {
    return this.#completed;
  }

  /** Items running now. */
  get running(): number {
    let n = 0;
    for (const set of this.#running.values()) n += set.size;
    return n;
  }

  start(): this {
    this.#unregisterMetrics = batchRunners.add(this);
    this.#unsubscribe = this.o.queue.onCancel((batchId) => {
      for (const abort of this.#running.get(batchId) ?? []) abort.abort(CANCELLED);
    });
    const max = this.o.maxConcurrency ?? (typeof this.o.concurrency === "number" ? this.o.concurrency : 64);
    this.#loops = Array.from({ length: max }, (_, slot) => this.#loop(slot));
    return this;
  }

  /** Stops taking items and hands running ones back; resolves when every slot has stopped. Repeat-safe. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stop.abort(STOPPING);
      this.#unsubscribe?.();
      this.#unregisterMetrics?.();
      await Promise.all(this.#loops);
    })();
    return this.#stopped;
  }

  /** Slots taken now: the concurrency the options give at this moment. */
  get slots(): number {
    return typeof this.o.concurrency === "number" ? this.o.concurrency : this.o.concurrency();
  }

  async #loop(slot: number): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      if (slot >= this.slots) {
        await sleep(1_000, signal); // a slot beyond today's concurrency waits until it is wanted
        continue;
      }
      let item: ClaimedItem | undefined;
      try {
        item = await this.o.queue.next(signal);
      } catch (err) {
        if (signal.aborted) break;
        if (Date.now() - this.#lastPullErrorLog > 30_000) {
          this.#lastPullErrorLog = Date.now();
          this.o.log(`batch runner: cannot take the next item (${(err as Error).message}); retrying every second`);
        }
        await sleep(1_000, signal);
        continue;
      }
      if (item === undefined) break;
      await this.#run(item).catch((err: unknown) => this.o.log(`batch runner: item ${item.itemId} of batch ${item.batchId}: ${(err as Error)?.stack ?? String(err)}`));
    }
  }

  async #run(item: ClaimedItem): Promise<void> {
    const abort = new AbortController();
    const onStop = () => abort.abort(STOPPING);
    this.#stop.signal.addEventListener("abort", onStop, { once: true });
    let set = this.#running.get(item.batchId);
    if (set === undefined) this.#running.set(item.batchId, (set = new Set()));
    set.add(abort);
    const collector = new ItemCollector(item);
    let result;
    try {
      // Each item is its own trace (a root span), linked to the span its batch was created in; its log lines name
      // the batch and the index.
      const attributes = { "attr_rag.batch.id": item.batchId, "attr_rag.batch.item_index": item.index, "attr_rag.batch.item_id": item.itemId, "attr_rag.batch.attempt": item.attempt };
      await withLogFields({ batch_id: item.batchId, item_index: item.index }, () =>
        inSpan("batch.item", attributes, () => this.o.runItem(item.request, collector.onEvent, abort.signal), { parent: ROOT_CONTEXT, links: linkTo(item.batchTraceparent) }),
      );
      result = collector.succeeded();
    } catch (err) {
      if (abort.signal.reason === STOPPING) {
        await item.release(0).catch(() => {});
        return;
      }
      if (abort.signal.reason === CANCELLED) {
        result = collector.cancelled(CANCELLED_WHILE_RUNNING);
      } else {
        const { code, details } = this.o.statusOf(err, `batch ${item.batchId} item ${item.itemId}`, this.o.log);
        if (NOT_THE_ITEMS_FAULT.has(code) && item.attempt < (this.o.maxAttempts ?? 5)) {
          this.o.log(`batch runner: item ${item.itemId} of batch ${item.batchId} (attempt ${item.attempt}) hit ${status[code]}: ${details}; it will run again`);
          countBatchRetry();
          await item.release(2_000 * item.attempt).catch(() => {});
          return;
        }
        result = collector.failed(code, details);
      }
    } finally {
      set.delete(abort);
      if (set.size === 0) this.#running.delete(item.batchId);
      this.#stop.signal.removeEventListener("abort", onStop);
    }
    await this.#record(item, result);
  }

  /** The result must reach the store: retried while the store is unreachable, left to a redelivery on stop. */
  async #record(item: ClaimedItem, result: Parameters<ClaimedItem["complete"]>[0]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        if (await item.complete(result)) {
          this.#completed++;
          countBatchItem(result.state);
        }
        return;
      } catch (err) {
        if (this.#stop.signal.aborted) {
          // Handed back unrecorded (the next runner runs it again), which also ends its "still working" timer.
          await item.release(0).catch(() => {});
          return;
        }
        this.o.log(`batch runner: cannot record the result of item ${item.itemId} of batch ${item.batchId} (${(err as Error).message}); retrying`);
        await sleep(Math.min(5_000, 250 * attempt), this.#stop.signal);
      }
    }
  }
}
