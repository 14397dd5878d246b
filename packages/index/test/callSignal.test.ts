import { EventEmitter } from "node:events";
import { status } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { callSignal } from "../src/service/callSignal.js";

/** A server call as grpc-js hands it over: `cancelled` is emitted on a client cancel or an expired deadline. */
function fakeCall(deadline: Date | number): EventEmitter & { cancelled: boolean; getDeadline(): Date | number } {
  return Object.assign(new EventEmitter(), { cancelled: false, getDeadline: () => deadline });
}

describe("callSignal", () => {
  it("call signal - a cancellation at or just before the deadline (grpc-js's timer can fire a little early) is DEADLINE_EXCEEDED", () => {
    for (const deadline of [new Date(Date.now() - 5), new Date(Date.now() + 10)]) {
      const call = fakeCall(deadline);
      const { signal } = callSignal(call);
      call.emit("cancelled");
      expect((signal.reason as { code: number }).code).toBe(status.DEADLINE_EXCEEDED);
    }
  });

  it("call signal - a cancellation well before the deadline, or with none, is the client's: CANCELLED", () => {
    for (const deadline of [new Date(Date.now() + 60_000), Infinity]) {
      const call = fakeCall(deadline);
      const { signal, dispose } = callSignal(call);
      call.emit("cancelled");
      expect((signal.reason as { code: number }).code).toBe(status.CANCELLED);
      dispose();
    }
    // After dispose the call's later events reach nothing.
    const call = fakeCall(Infinity);
    const { signal, dispose } = callSignal(call);
    dispose();
    call.emit("cancelled");
    expect(signal.aborted).toBe(false);
  });
});
