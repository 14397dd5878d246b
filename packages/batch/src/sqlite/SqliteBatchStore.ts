import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { status } from "@grpc/grpc-js";
import { AskRequest, BatchItemResult, BatchItemState, type Batch } from "@attr-rag/contracts";
import { openDurableDatabase, ServiceError, StoreLock } from "@attr-rag/index";
import type Database from "better-sqlite3";
import type { BatchQueue, BatchStore, NewBatch } from "../batchStore.js";
import { ChangeSignal } from "../changeSignal.js";
import { cancelledResult, CANCELLED_BEFORE_START } from "../itemResult.js";
import { decodePageToken, encodePageToken } from "../pageToken.js";
import { migrateBatches } from "./batchSchema.js";
import { batchRowView, type BatchRow } from "./batchRowView.js";
import { SqliteBatchQueue } from "./SqliteBatchQueue.js";
import { batchConflict } from "../batchConflict.js";
import { batchEndedBody, batchEndedEventId, batchEndedType } from "../webhooks/batchEndedEvent.js";
import type { WebhookEvent, WebhookOutbox } from "../webhooks/webhookOutbox.js";

export const BATCHES_FILE = "batches.sqlite";

/**
 * Starts of one item, counted across restarts, after which an item a dead process was running ends FAILED
 * instead of running again: it may be what killed the process (a native abort), and it would at every
 * restart. The same number as JetStream's max deliveries for batch items in distributed mode.
 */
export const MAX_ITEM_ATTEMPTS = 10;

/**
 * Batches of an embedded gateway in `<stateDir>/batches.sqlite`: WAL with synchronous=FULL, so a batch whose
 * CreateBatch returned, and every result recorded, survive kill -9 and power loss. One process at a time
 * (batches.lock); on open, items a dead process was running go back to the queue (or, started
 * MAX_ITEM_ATTEMPTS times, end FAILED), and a cancel it did not finish is finished.
 */
export class SqliteBatchStore implements BatchStore, WebhookOutbox {
  readonly queue: SqliteBatchQueue;
  readonly #changes = new ChangeSignal();
  readonly #webhooks = new ChangeSignal();
  #closed = false;

  private constructor(
    readonly db: Database.Database,
    readonly path: string,
    private readonly lock: StoreLock,
  ) {
    this.queue = new SqliteBatchQueue(db, this.#changes, (batchId) => this.#finishIfEnded(batchId));
  }

  static open(stateDir: string): SqliteBatchStore {
    try {
      mkdirSync(stateDir, { recursive: true });
    } catch (err) {
      throw new Error(`cannot create the state directory ${stateDir}: ${(err as Error).message}`, { cause: err });
    }
    const path = join(stateDir, BATCHES_FILE);
    const lock = StoreLock.acquire(join(stateDir, "batches.lock"), stateDir);
    let db: Database.Database | undefined;
    try {
      db = openDurableDatabase(path);
      migrateBatches(db, path);
      const store = new SqliteBatchStore(db, path, lock);
      store.#recover();
      return store;
    } catch (err) {
      db?.close();
      lock.release();
      throw new Error(`cannot open the batch database ${path}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** What a process that died left behind: its running items run again; cancels and endings are finished. */
  #recover(): void {
    this.db.transaction(() => {
      const spent = this.db.prepare("SELECT batch_id, idx, item_id, request, attempts FROM items WHERE state = 'running' AND attempts >= ?").all(MAX_ITEM_ATTEMPTS) as {
        batch_id: string;
        idx: number;
        item_id: string;
        request: Buffer;
        attempts: number;
      }[];
      for (const item of spent) {
        const result = BatchItemResult.fromPartial({
          batchId: item.batch_id,
          itemId: item.item_id,
          index: item.idx,
          question: AskRequest.decode(item.request).question,
          attempts: item.attempts,
          state: BatchItemState.BATCH_ITEM_STATE_FAILED,
          statusCode: status.INTERNAL,
          statusMessage: `the gateway stopped while this item ran, ${item.attempts} times in a row (the item itself may crash it, e.g. a native abort); it is not run again`,
          finishedUnixMs: Date.now(),
        });
        this.queue.recordResult(item.batch_id, item.idx, "failed", result);
      }
      this.db.prepare("UPDATE items SET state = 'queued' WHERE state = 'running'").run();
      const open = this.db.prepare("SELECT id, cancelled FROM batches WHERE finished_ms IS NULL").all() as { id: string; cancelled: number }[];
      for (const b of open) {
        if (b.cancelled === 1) this.#cancelQueued(b.id, Date.now());
        this.#finishIfEnded(b.id);
      }
    })();
  }

  async create(batch: NewBatch): Promise<{ batch: Batch; created: boolean }> {
    const created = this.db.transaction(() => {
      const existing = this.#row(batch.batchId);
      if (existing !== undefined) {
        const conflict = batchConflict({ itemsSha256: existing.items_sha256, totalItems: existing.total, label: existing.label, webhookUrl: existing.webhook_url }, batch);
        if (conflict !== undefined) throw conflict;
        return false;
      }
      this.db
        .prepare("INSERT INTO batches (id, label, items_sha256, total, created_ms, traceparent, webhook_url) VALUES (?, ?, ?, ?, ?, ?, ?)")
        .run(batch.batchId, batch.label, batch.itemsSha256, batch.items.length, batch.createdUnixMs, batch.traceparent ?? "", batch.webhookUrl ?? "");
      const insert = this.db.prepare("INSERT INTO items (batch_id, idx, item_id, request, state) VALUES (?, ?, ?, ?, 'queued')");
      batch.items.forEach((item, i) => insert.run(batch.batchId, i, item.itemId, AskRequest.encode(item.request ?? AskRequest.create()).finish()));
      return true;
    })();
    this.#changes.notify(batch.batchId);
    return { batch: this.#view(this.#row(batch.batchId)!), created };
  }

  async get(batchId: string): Promise<Batch> {
    return this.#view(this.#require(batchId));
  }

  async list(pageSize: number, pageToken: string): Promise<{ batches: Batch[]; nextPageToken: string }> {
    const after = pageToken === "" ? undefined : decodePageToken(pageToken);
    const rows = (
      after === undefined
        ? this.db.prepare("SELECT * FROM batches ORDER BY created_ms DESC, id DESC LIMIT ?").all(pageSize + 1)
        : this.db.prepare("SELECT * FROM batches WHERE (created_ms, id) < (?, ?) ORDER BY created_ms DESC, id DESC LIMIT ?").all(after.createdMs, after.id, pageSize + 1)
    ) as BatchRow[];
    const page = rows.slice(0, pageSize);
    const last = page.at(-1);
    return { batches: page.map((r) => this.#view(r)), nextPageToken: rows.length > pageSize && last !== undefined ? encodePageToken({ createdMs: last.created_ms, id: last.id }) : "" };
  }

  async cancel(batchId: string): Promise<Batch> {
    const wasRunning = this.db.transaction(() => {
      const row = this.#require(batchId);
      if (row.finished_ms !== null || row.cancelled === 1) return false;
      this.db.prepare("UPDATE batches SET cancelled = 1 WHERE id = ?").run(batchId);
      this.#cancelQueued(batchId, Date.now());
      this.#finishIfEnded(batchId);
      return true;
    })();
    if (wasRunning) this.queue.announceCancel(batchId);
    this.#changes.notify(batchId);
    return this.#view(this.#require(batchId));
  }

  async *results(batchId: string, offset: number, follow: boolean, signal: AbortSignal): AsyncIterable<BatchItemResult> {
    this.#require(batchId);
    const page = this.db.prepare("SELECT pos, result FROM results WHERE batch_id = ? AND pos >= ? ORDER BY pos LIMIT 256");
    let next = offset;
    for (;;) {
      signal.throwIfAborted();
      const rows = page.all(batchId, next) as { pos: number; result: Buffer }[];
      for (const row of rows) {
        yield { ...BatchItemResult.decode(row.result), offset: row.pos };
        next = row.pos + 1;
      }
      if (rows.length > 0) continue;
      if (!follow || this.#require(batchId).finished_ms !== null) return;
      await this.#changes.wait(batchId, 1_000, signal);
    }
  }

  changed(batchId: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
    return this.#changes.wait(batchId, timeoutMs, signal);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.queue.close();
    this.db.close();
    this.lock.release();
  }

  /** Queued items of a cancelled batch end CANCELLED (in the caller's transaction). */
  #cancelQueued(batchId: string, nowMs: number): void {
    const queued = this.db.prepare("SELECT idx, item_id, request FROM items WHERE batch_id = ? AND state = 'queued' ORDER BY idx").all(batchId) as { idx: number; item_id: string; request: Buffer }[];
    for (const q of queued) {
      const result = cancelledResult({ batchId, itemId: q.item_id, index: q.idx, question: AskRequest.decode(q.request).question }, CANCELLED_BEFORE_START, nowMs);
      this.queue.recordResult(batchId, q.idx, "cancelled", result);
    }
  }

  /**
   * Stamps finished_ms once no item is queued or running, and queues the batch's webhook event (in the caller's
   * transaction: the event exists exactly when the batch has ended).
   */
  #finishIfEnded(batchId: string): void {
    const open = this.db.prepare("SELECT count(*) AS n FROM items WHERE batch_id = ? AND state IN ('queued', 'running')").get(batchId) as { n: number };
    if (open.n !== 0) return;
    const now = Date.now();
    if (this.db.prepare("UPDATE batches SET finished_ms = ? WHERE id = ? AND finished_ms IS NULL").run(now, batchId).changes === 0) return;
    const row = this.#row(batchId)!;
    if (row.webhook_url === "") return;
    const counts = { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
    for (const r of this.db.prepare("SELECT state, count(*) AS n FROM items WHERE batch_id = ? GROUP BY state").all(batchId) as { state: keyof typeof counts; n: number }[]) counts[r.state] = r.n;
    const body = batchEndedBody(batchId, batchEndedType(row.cancelled === 1, counts), now, row.total, counts);
    this.db.prepare("INSERT OR IGNORE INTO webhook_events (id, batch_id, url, body, created_ms, next_ms) VALUES (?, ?, ?, ?, ?, ?)").run(batchEndedEventId(batchId), batchId, row.webhook_url, body, now, now);
    this.#webhooks.notify("");
  }

  dueWebhooks(nowMs: number, limit: number): WebhookEvent[] {
    const rows = this.db
      .prepare("SELECT id, batch_id, url, body, created_ms, attempts FROM webhook_events WHERE delivered_ms IS NULL AND given_up_ms IS NULL AND next_ms <= ? ORDER BY next_ms LIMIT ?")
      .all(nowMs, limit) as { id: string; batch_id: string; url: string; body: string; created_ms: number; attempts: number }[];
    return rows.map((r) => ({ id: r.id, batchId: r.batch_id, url: r.url, body: r.body, createdMs: r.created_ms, attempts: r.attempts }));
  }

  webhookDelivered(id: string, nowMs: number): void {
    this.db.prepare("UPDATE webhook_events SET delivered_ms = ?, attempts = attempts + 1, last_error = '' WHERE id = ?").run(nowMs, id);
  }

  webhookRetry(id: string, attempts: number, nextMs: number, error: string): void {
    this.db.prepare("UPDATE webhook_events SET attempts = ?, next_ms = ?, last_error = ? WHERE id = ?").run(attempts, nextMs, error.slice(0, 1000), id);
  }

  webhookGaveUp(id: string, attempts: number, nowMs: number, error: string): void {
    this.db.prepare("UPDATE webhook_events SET attempts = ?, given_up_ms = ?, last_error = ? WHERE id = ?").run(attempts, nowMs, error.slice(0, 1000), id);
  }

  /** Resolves when a webhook event may be due (a batch with a webhook ended), or after `timeoutMs`. */
  webhookQueued(timeoutMs: number, signal: AbortSignal): Promise<void> {
    return this.#webhooks.wait("", timeoutMs, signal);
  }

  #row(batchId: string): BatchRow | undefined {
    return this.db.prepare("SELECT * FROM batches WHERE id = ?").get(batchId) as BatchRow | undefined;
  }

  #require(batchId: string): BatchRow {
    const row = this.#row(batchId);
    if (row === undefined) throw new ServiceError(status.NOT_FOUND, `no batch ${batchId}; list them with ListBatches (attr-rag batch list)`);
    return row;
  }

  #view(row: BatchRow): Batch {
    return batchRowView(this.db, row, Date.now());
  }
}
