import { status, type Deadline } from "@grpc/grpc-js";
import { ServiceError } from "./ServiceError.js";

/**
 * An AbortSignal that fires when the client cancels the call or its deadline passes (grpc-js ends the call
 * with DEADLINE_EXCEEDED itself and reports it as a cancellation). The reason is a ServiceError with the
 * matching code, so work that rejects with `signal.reason` maps to the right status.
 */
/** The part of a grpc-js server call (unary or streaming) this needs. */
interface CancellableCall {
  readonly cancelled: boolean;
  getDeadline(): Deadline;
  once(event: "cancelled", listener: () => void): unknown;
  removeListener(event: "cancelled", listener: () => void): unknown;
}

/**
 * grpc-js's deadline timer can fire a millisecond or so before Date.now() reaches the deadline (timers and the
 * wall clock round differently): a cancellation this close to the deadline is the deadline's.
 */
const DEADLINE_SLACK_MS = 50;

export function callSignal(call: CancellableCall): { readonly signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onCancelled = () => {
    const deadline = call.getDeadline();
    const ms = deadline instanceof Date ? deadline.getTime() : deadline;
    const expired = Number.isFinite(ms) && Date.now() >= ms - DEADLINE_SLACK_MS;
    controller.abort(
      expired ? new ServiceError(status.DEADLINE_EXCEEDED, "the call's deadline passed; the work was stopped") : new ServiceError(status.CANCELLED, "the client cancelled the call"),
    );
  };
  if (call.cancelled) onCancelled();
  else call.once("cancelled", onCancelled);
  return { signal: controller.signal, dispose: () => call.removeListener("cancelled", onCancelled) };
}
