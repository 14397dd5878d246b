import { AskRequest, BatchItemResult, BatchItemState } from "@attr-rag/contracts";
import type Database from "better-sqlite3";
import type { BatchQueue, ClaimedItem } from "../batchStore.js";
import type { ChangeSignal } from "../changeSignal.js";

type ItemEnd = "succeeded" | "failed" | "cancelled";

const END_OF: Partial<Record<BatchItemState, ItemEnd>> = {
  [BatchItemState.BATCH_ITEM_STATE_SUCCEEDED]: "succeeded",
  [BatchItemState.BATCH_ITEM_STATE_FAILED]: "failed",
  [BatchItemState.BATCH_ITEM_STATE_CANCELLED]: "cancelled",
};

/**
 * The runners' side of batches.sqlite: batches in the order they were created, each batch's items in order.
 * Claiming marks an item running; its result and its new state are written in one transaction, so after a
 * crash an item either has its one result or runs again.
 */
export class SqliteBatchQueue implements BatchQueue {
  readonly #cancelListeners = new Set<(batchId: string) => void>();
  #closed = false;

  constructor(
    private readonly db: Database.Database,
    private readonly changes: ChangeSignal,
    /** Stamps the batch's end once nothing is queued or running (called inside the recording transaction). */
    private readonly finishIfEnded: (batchId: string) => void,
  ) {}

  async next(signal: AbortSignal): Promise<ClaimedItem | undefined> {
    while (!signal.aborted && !this.#closed) {
      const claimed = this.#claim(Date.now());
      if (claimed !== undefined) return claimed;
      // New batches and released items notify "*"; a delayed release is found by the timeout.
      await this.changes.wait("*", 1_000, signal);
    }
    return undefined;
  }

  onCancel(listener: (batchId: string) => void): () => void {
    this.#cancelListeners.add(listener);
    return () => this.#cancelListeners.delete(listener);
  }

  announceCancel(batchId: string): void {
    for (const listener of this.#cancelListeners) listener(batchId);
  }

  /** Inserts the item's result and sets its end state (in the caller's transaction). False when it had one. */
  recordResult(batchId: string, index: number, end: ItemEnd, result: BatchItemResult): boolean {
    const batch = this.db.prepare("SELECT finished FROM batches WHERE id = ?").get(batchId) as { finished: number } | undefined;
    if (batch === undefined) return false;
    const inserted = this.db
      .prepare("INSERT INTO results (batch_id, idx, pos, finished_ms, result) VALUES (?, ?, ?, ?, ?) ON CONFLICT (batch_id, idx) DO NOTHING")
      .run(batchId, index, batch.finished, result.finishedUnixMs, BatchItemResult.encode({ ...result, offset: 0 }).finish());
    if (inserted.changes === 0) return false;
    this.db.prepare("UPDATE batches SET finished = finished + 1 WHERE id = ?").run(batchId);
    this.db.prepare("UPDATE items SET state = ? WHERE batch_id = ? AND idx = ?").run(end, batchId, index);
    return true;
  }

  close(): void {
    this.#closed = true;
    this.changes.notify("*");
  }

  #claim(nowMs: number): ClaimedItem | undefined {
    return this.db.transaction(() => {
      const open = this.db.prepare("SELECT id, traceparent FROM batches WHERE finished_ms IS NULL AND cancelled = 0 ORDER BY created_ms, id").all() as { id: string; traceparent: string }[];
      const firstQueued = this.db.prepare("SELECT idx, item_id, request, attempts FROM items WHERE batch_id = ? AND state = 'queued' AND not_before_ms <= ? ORDER BY idx LIMIT 1");
      for (const { id, traceparent } of open) {
        const row = firstQueued.get(id, nowMs) as { idx: number; item_id: string; request: Buffer; attempts: number } | undefined;
        if (row === undefined) continue;
        this.db.prepare("UPDATE items SET state = 'running', attempts = attempts + 1 WHERE batch_id = ? AND idx = ?").run(id, row.idx);
        this.changes.notify(id);
        return this.#claimed(id, row.idx, row.item_id, AskRequest.decode(row.request), row.attempts + 1, traceparent);
      }
      return undefined;
    })();
  }

  #claimed(batchId: string, index: number, itemId: string, request: AskRequest, attempt: number, batchTraceparent: string): ClaimedItem {
    return {
      batchId,
      index,
      itemId,
      request,
      attempt,
      batchTraceparent,
      complete: async (result) => {
        const end = END_OF[result.state];
        if (end === undefined) throw new Error(`a batch item ends SUCCEEDED, FAILED or CANCELLED, not ${result.state}`);
        const recorded = this.db.transaction(() => {
          const ok = this.recordResult(batchId, index, end, result);
          if (ok) this.finishIfEnded(batchId);
          return ok;
        })();
        this.changes.notify(batchId);
        return recorded;
      },
      release: async (delayMs) => {
        this.db.prepare("UPDATE items SET state = 'queued', not_before_ms = ? WHERE batch_id = ? AND idx = ? AND state = 'running'").run(Date.now() + delayMs, batchId, index);
        this.changes.notify(batchId);
        this.changes.notify("*");
      },
    };
  }
}
