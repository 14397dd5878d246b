import type { AskRequest, Batch, BatchItem, BatchItemResult } from "@attr-rag/contracts";

/** A validated CreateBatch: what a store records (items in submission order). */
export interface NewBatch {
  readonly batchId: string;
  readonly label: string;
  /** SHA-256 (hex) of the items: equal batches have equal digests. */
  readonly itemsSha256: string;
  readonly items: readonly BatchItem[];
  readonly createdUnixMs: number;
  /** W3C traceparent of the span CreateBatch ran in, when traced: the items' spans link to it. */
  readonly traceparent?: string;
  /** Called when the batch ends (checked by the caller: http(s), not internal unless allowed). */
  readonly webhookUrl?: string;
}

/**
 * Where batches live: SQLite beside the store (embedded) or JetStream (distributed). Everything a client was
 * promised is in the store before the call that promised it returns; nothing lives only in a process.
 */
export interface BatchStore {
  /** Records the batch and queues its items; the same id and digest returns the existing one. ALREADY_EXISTS otherwise. */
  create(batch: NewBatch, signal: AbortSignal): Promise<{ batch: Batch; created: boolean }>;
  /** The batch with its counts; NOT_FOUND for an unknown id. */
  get(batchId: string, signal: AbortSignal): Promise<Batch>;
  /** Newest first; the token is opaque to callers. */
  list(pageSize: number, pageToken: string, signal: AbortSignal): Promise<{ batches: Batch[]; nextPageToken: string }>;
  /** Marks it cancelled, ends its queued items CANCELLED and tells the runners to stop its running ones. */
  cancel(batchId: string, signal: AbortSignal): Promise<Batch>;
  /** Results in finish order from `offset`, each with its offset set; with `follow`, waits for more until the batch ends. */
  results(batchId: string, offset: number, follow: boolean, signal: AbortSignal): AsyncIterable<BatchItemResult>;
  /** Resolves when the batch may have changed, or after `timeoutMs` (watchers poll with it). */
  changed(batchId: string, timeoutMs: number, signal: AbortSignal): Promise<void>;
  /** The runners' side of the same store. */
  readonly queue: BatchQueue;
  close(): Promise<void>;
}

/** The runner's view: items to run, one at a time per slot, and word of cancelled batches. */
export interface BatchQueue {
  /** The next item to run; waits while there is none. Undefined once `signal` aborts. */
  next(signal: AbortSignal): Promise<ClaimedItem | undefined>;
  /** Calls `listener` with a batch's id when it is cancelled (on any gateway); returns the unsubscribe. */
  onCancel(listener: (batchId: string) => void): () => void;
}

/** An item a runner holds: it records one result for it, or hands it back to be run later. */
export interface ClaimedItem {
  readonly batchId: string;
  readonly index: number;
  readonly itemId: string;
  readonly request: AskRequest;
  /** 1 on the first run; more after a runner died or handed it back. */
  readonly attempt: number;
  /** NewBatch.traceparent of its batch ("" or undefined when CreateBatch was not traced). */
  readonly batchTraceparent?: string;
  /** Records the item's one result. False when it already had one (another runner got there first). */
  complete(result: BatchItemResult): Promise<boolean>;
  /** Back to the queue, to run again after `delayMs` (this runner is stopping, or the failure was not the item's). */
  release(delayMs: number): Promise<void>;
}
