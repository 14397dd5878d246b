import { AskRequest, type BatchItemResult } from "@attr-rag/contracts";
import { toGrpcStatus } from "@attr-rag/index";
import { describe, expect, it } from "vitest";
import { BatchRunner } from "../src/BatchRunner.js";
import type { BatchQueue, ClaimedItem } from "../src/batchStore.js";
import { ChangeSignal } from "../src/changeSignal.js";
import { InteractiveGate } from "../src/interactiveGate.js";
import { until } from "../../gateway/test/helpers/until.js";

// Nothing waits on anything after it is over: a long-lived gateway watches thousands of batches and runs
// items for days, and every waiter left behind is kept for good.
describe("batch waiters and timers", () => {
  it("batch waiters - a change waiter that timed out or was aborted leaves nothing behind for its batch", async () => {
    const changes = new ChangeSignal();
    const aborted = new AbortController();
    const waits = [
      ...Array.from({ length: 50 }, (_, i) => changes.wait(`batch-${i}`, 5, new AbortController().signal)),
      ...Array.from({ length: 50 }, (_, i) => changes.wait(`other-${i}`, 60_000, aborted.signal)),
    ];
    expect(changes.waitingKeys).toBe(100);
    aborted.abort();
    await Promise.all(waits);
    expect(changes.waitingKeys).toBe(0);
    // Still wakes a waiter once it is there again.
    const woken = changes.wait("batch-1", 60_000, new AbortController().signal);
    changes.notify("batch-1");
    await woken;
    expect(changes.waitingKeys).toBe(0);
  });

  it("batch waiters - a batch job that gave up waiting for the interactive gate leaves the gate's list at once", async () => {
    const gate = new InteractiveGate();
    const leave = gate.enter();
    const controllers = Array.from({ length: 100 }, () => new AbortController());
    const waits = controllers.map((c) => gate.whenIdle(c.signal).then(() => "idle", () => "aborted"));
    expect(gate.waiting).toBe(100);
    controllers.slice(0, 99).forEach((c) => c.abort(new Error("cancelled")));
    expect(await Promise.all(waits.slice(0, 99))).toEqual(Array(99).fill("aborted"));
    expect(gate.waiting).toBe(1);
    leave();
    expect(await waits[99]).toBe("idle");
    expect(gate.waiting).toBe(0);
  });

  it("batch waiters - a runner stopped while it cannot record a result hands the item back (ending its keep-alive timer) instead of leaving it held", async () => {
    const released: number[] = [];
    let given = false;
    let completeCalls = 0;
    const item: ClaimedItem = {
      batchId: "b",
      index: 0,
      itemId: "b-0",
      request: AskRequest.fromPartial({ question: "q" }),
      attempt: 1,
      complete: async (_: BatchItemResult) => {
        completeCalls++;
        throw new Error("NATS connection closed");
      },
      release: async (delayMs) => void released.push(delayMs),
    };
    const queue: BatchQueue = {
      next: async (signal) => {
        if (!given) return ((given = true), item);
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        return undefined;
      },
      onCancel: () => () => {},
    } as BatchQueue;
    const lines: string[] = [];
    // A pipeline that fails at once (its failure is the item's result), so the runner goes on to record it.
    const runItem = () => Promise.reject(new Error("no pipeline here"));
    const runner = new BatchRunner({ queue, runItem, statusOf: toGrpcStatus, concurrency: 1, log: (l) => lines.push(l) }).start();
    await until(() => completeCalls >= 2, "the runner to retry recording the result");
    await runner.stop();
    expect(released).toEqual([0]);
    expect(lines.some((l) => /cannot record the result of item b-0 of batch b \(NATS connection closed\); retrying/.test(l))).toBe(true);
  });
});
