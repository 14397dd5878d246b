import { status } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { Admission } from "../src/index.js";

describe("gateway admission", () => {
  it("admission - runs up to maxRunning, queues up to maxQueued in FIFO order, refuses the rest", async () => {
    const a = new Admission(1, 2);
    const signal = new AbortController().signal;
    const first = await a.acquire(signal);
    const order: string[] = [];
    const second = a.acquire(signal).then((r) => (order.push("second"), r));
    const third = a.acquire(signal).then((r) => (order.push("third"), r));
    expect(a.queued).toBe(2);
    await expect(a.acquire(signal)).rejects.toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    first();
    first(); // repeat-safe: a second release must not free a slot that is not ours
    const releaseSecond = await second;
    expect(order).toEqual(["second"]);
    expect(a.running).toBe(1);
    releaseSecond();
    (await third)();
    expect(order).toEqual(["second", "third"]);
    expect(a.running).toBe(0);
  });

  it("admission - a waiter whose call is cancelled leaves the queue with the cancel's reason", async () => {
    const a = new Admission(1, 1);
    const hold = await a.acquire(new AbortController().signal);
    const controller = new AbortController();
    const waiting = a.acquire(controller.signal);
    expect(a.queued).toBe(1);
    const reason = new Error("client went away");
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(a.queued).toBe(0);
    // Its place is free again.
    const next = a.acquire(new AbortController().signal);
    hold();
    (await next)();
    expect(a.running).toBe(0);
  });
});
