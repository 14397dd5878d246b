// How a batch is doing, from counts alone: its state, its rate and when it should end. Both batch stores
// (SQLite embedded, JetStream distributed) count; this decides what the counts mean, so they agree.

/** Items per state; they add up to the batch's total. */
export interface BatchItemCounts {
  readonly queued: number;
  readonly running: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly cancelled: number;
}

export type BatchLifecycle = "submitting" | "running" | "cancelling" | "completed" | "cancelled";

/** The window the rate is measured over: recent enough to follow a batch that speeds up or slows down. */
export const RATE_WINDOW_MS = 5 * 60_000;

/** Items that have their result (succeeded, failed or cancelled). */
export function finishedItems(c: BatchItemCounts): number {
  return c.succeeded + c.failed + c.cancelled;
}

/**
 * A batch has ended when every item has its result; until then it runs, or, once cancelled, is cancelling
 * (its running items are being stopped). A batch whose items are not all queued yet is still submitting.
 */
export function batchLifecycle(o: { readonly total: number; readonly counts: BatchItemCounts; readonly cancelled: boolean; readonly submitted: boolean }): BatchLifecycle {
  const ended = finishedItems(o.counts) >= o.total;
  if (o.cancelled) return ended ? "cancelled" : "cancelling";
  if (ended) return "completed";
  return o.submitted ? "running" : "submitting";
}

export interface BatchThroughput {
  readonly itemsPerMinute: number;
  /** Seconds until the remaining items finish at that rate; undefined when nothing remains or no rate is known. */
  readonly etaSeconds?: number;
}

/**
 * Items per minute over the last RATE_WINDOW_MS (or since the batch was created, if later), and the time the
 * remaining items need at that rate.
 * `finishedInWindow`: results recorded at or after windowStart(createdMs, nowMs).
 */
export function batchThroughput(o: { readonly finishedInWindow: number; readonly createdMs: number; readonly nowMs: number; readonly remaining: number }): BatchThroughput {
  const spanMs = o.nowMs - windowStart(o.createdMs, o.nowMs);
  if (spanMs <= 0 || o.finishedInWindow <= 0) return { itemsPerMinute: 0 };
  const itemsPerMinute = (o.finishedInWindow * 60_000) / spanMs;
  return o.remaining > 0 ? { itemsPerMinute, etaSeconds: (o.remaining / itemsPerMinute) * 60 } : { itemsPerMinute };
}

/** Where the rate window starts: RATE_WINDOW_MS ago, or at creation if that is later. */
export function windowStart(createdMs: number, nowMs: number): number {
  return Math.max(createdMs, nowMs - RATE_WINDOW_MS);
}
