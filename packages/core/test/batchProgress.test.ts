import { describe, expect, it } from "vitest";
import { batchLifecycle, batchThroughput, finishedItems, RATE_WINDOW_MS, windowStart } from "../src/index.js";

const counts = (queued: number, running: number, succeeded: number, failed: number, cancelled: number) => ({ queued, running, succeeded, failed, cancelled });

describe("batch progress", () => {
  it("batch progress - a batch ends when every item has a result, whatever the outcome", () => {
    expect(finishedItems(counts(1, 2, 3, 4, 5))).toBe(12);
    expect(batchLifecycle({ total: 10, counts: counts(3, 2, 5, 0, 0), cancelled: false, submitted: true })).toBe("running");
    expect(batchLifecycle({ total: 10, counts: counts(0, 0, 7, 3, 0), cancelled: false, submitted: true })).toBe("completed");
    expect(batchLifecycle({ total: 10, counts: counts(0, 1, 7, 0, 2), cancelled: true, submitted: true })).toBe("cancelling");
    expect(batchLifecycle({ total: 10, counts: counts(0, 0, 7, 0, 3), cancelled: true, submitted: true })).toBe("cancelled");
    expect(batchLifecycle({ total: 10, counts: counts(4, 0, 0, 0, 0), cancelled: false, submitted: false })).toBe("submitting");
  });

  it("batch progress - the rate counts the last five minutes, or the time since creation when shorter", () => {
    const now = 1_000_000_000;
    // Created 2 minutes ago, 10 finished: 5 per minute; 20 left → 4 minutes.
    const young = batchThroughput({ finishedInWindow: 10, createdMs: now - 120_000, nowMs: now, remaining: 20 });
    expect(young.itemsPerMinute).toBeCloseTo(5, 12);
    expect(young.etaSeconds).toBeCloseTo(240, 9);
    // Created an hour ago: only the window counts (15 in 5 minutes = 3 per minute).
    expect(windowStart(now - 3_600_000, now)).toBe(now - RATE_WINDOW_MS);
    const old = batchThroughput({ finishedInWindow: 15, createdMs: now - 3_600_000, nowMs: now, remaining: 6 });
    expect(old.itemsPerMinute).toBeCloseTo(3, 12);
    expect(old.etaSeconds).toBeCloseTo(120, 9);
  });

  it("batch progress - no rate before the first result, no ETA when nothing remains", () => {
    const now = 5_000_000;
    expect(batchThroughput({ finishedInWindow: 0, createdMs: now - 60_000, nowMs: now, remaining: 9 })).toEqual({ itemsPerMinute: 0 });
    expect(batchThroughput({ finishedInWindow: 3, createdMs: now, nowMs: now, remaining: 9 })).toEqual({ itemsPerMinute: 0 });
    const done = batchThroughput({ finishedInWindow: 4, createdMs: now - 60_000, nowMs: now, remaining: 0 });
    expect(done.itemsPerMinute).toBeCloseTo(4, 12);
    expect(done.etaSeconds).toBeUndefined();
  });
});
