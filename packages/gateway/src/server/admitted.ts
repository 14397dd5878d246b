import { status, type Metadata } from "@grpc/grpc-js";
import { extractTrace, inSpan, metadataCarrier, SpanKind } from "@attr-rag/telemetry";
import { observeQueueTime } from "../metrics/admissionMetrics.js";
import { checkBearer } from "./auth.js";
import type { ServerContext } from "./serverContext.js";

/**
 * The gate every engine-running call passes: the bearer token, then `validate` (so a bad request gets its
 * precise code at once instead of waiting in, or being refused by, a full queue), then a slot in the
 * bounded admission queue; `work` runs holding the slot, which is released however it ends. While it runs it
 * also holds the runtime's interactive gate, so batch items make way for it (see InteractiveGate).
 */
export function admitted<P, T>(ctx: ServerContext, rpc: string, metadata: Metadata, signal: AbortSignal, validate: () => P, work: (prepared: P) => Promise<T>): Promise<T> {
  // The call's span continues the client's trace (traceparent in gRPC metadata or HTTP headers); the
  // pipeline's stage spans and every NATS hop hang under it.
  const parent = extractTrace(metadataCarrier(metadata));
  return inSpan(`${AttrRagServiceName}/${rpc}`, { "rpc.system": "grpc", "rpc.service": AttrRagServiceName, "rpc.method": rpc }, () => admittedWork(ctx, rpc, metadata, signal, validate, work), { parent, kind: SpanKind.SERVER });
}

const AttrRagServiceName = "attr_rag.v1.AttrRagService";

async function admittedWork<P, T>(ctx: ServerContext, rpc: string, metadata: Metadata, signal: AbortSignal, validate: () => P, work: (prepared: P) => Promise<T>): Promise<T> {
  checkBearer(metadata, ctx.runtime.config.authToken);
  const prepared = validate();
  const waitStarted = performance.now();
  const release = await ctx.admission.acquire(signal);
  observeQueueTime(rpc, (performance.now() - waitStarted) / 1000);
  const leave = ctx.runtime.interactive.enter();
  // When the call is aborted while its work runs, how long the work takes to stop is recorded (StoppedCalls).
  let abortedAt: number | undefined;
  const onAbort = () => (abortedAt = performance.now());
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  let stopped = true;
  try {
    const value = await work(prepared);
    stopped = false;
    return value;
  } finally {
    signal.removeEventListener("abort", onAbort);
    if (abortedAt !== undefined) {
      const code = (signal.reason as { code?: unknown } | undefined)?.code;
      ctx.stopped.record({ rpc, code: typeof code === "number" ? code : status.CANCELLED, stopMs: performance.now() - abortedAt, stopped });
    }
    leave();
    release();
  }
}
