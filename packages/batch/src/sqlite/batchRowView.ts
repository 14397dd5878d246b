import { batchLifecycle, batchThroughput, windowStart, type BatchItemCounts } from "@attr-rag/core";
import type { Batch } from "@attr-rag/contracts";
import type Database from "better-sqlite3";
import { toBatch } from "../toBatch.js";
import { webhookDelivery } from "../webhooks/webhookDelivery.js";

/** A row of the batches table. */
export interface BatchRow {
  id: string;
  label: string;
  items_sha256: string;
  total: number;
  created_ms: number;
  cancelled: number;
  finished: number;
  finished_ms: number | null;
  webhook_url: string;
}

/** The batch as a client sees it: counts from its items, the rate from its recent results. */
export function batchRowView(db: Database.Database, row: BatchRow, nowMs: number): Batch {
  const counts: Record<keyof BatchItemCounts, number> = { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
  for (const r of db.prepare("SELECT state, count(*) AS n FROM items WHERE batch_id = ? GROUP BY state").all(row.id) as { state: keyof BatchItemCounts; n: number }[]) counts[r.state] = r.n;
  const inWindow = db.prepare("SELECT count(*) AS n FROM results WHERE batch_id = ? AND finished_ms >= ?").get(row.id, windowStart(row.created_ms, nowMs)) as { n: number };
  const lifecycle = batchLifecycle({ total: row.total, counts, cancelled: row.cancelled === 1, submitted: true });
  const throughput = batchThroughput({ finishedInWindow: inWindow.n, createdMs: row.created_ms, nowMs, remaining: counts.queued + counts.running });
  const event =
    row.webhook_url === ""
      ? undefined
      : (db.prepare("SELECT attempts, last_error, delivered_ms, given_up_ms FROM webhook_events WHERE batch_id = ?").get(row.id) as
          | { attempts: number; last_error: string; delivered_ms: number | null; given_up_ms: number | null }
          | undefined);
  const webhook = webhookDelivery({
    url: row.webhook_url,
    eventExists: event !== undefined,
    attempts: event?.attempts ?? 0,
    lastError: event?.last_error ?? "",
    ...(event?.delivered_ms != null ? { deliveredMs: event.delivered_ms } : {}),
    ...(event?.given_up_ms != null ? { gaveUpMs: event.given_up_ms } : {}),
  });
  return toBatch({
    batchId: row.id,
    label: row.label,
    itemsSha256: row.items_sha256,
    total: row.total,
    createdMs: row.created_ms,
    ...(row.finished_ms !== null ? { finishedMs: row.finished_ms } : {}),
    counts,
    lifecycle,
    throughput,
    webhookUrl: row.webhook_url,
    ...(webhook !== undefined ? { webhook } : {}),
  });
}
