import { context, propagation, ROOT_CONTEXT, trace, type Context, type Link } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

/**
 * W3C trace context (traceparent, tracestate) is what we carry between processes, set here rather than by an
 * SDK so a process that exports nothing still passes a caller's trace on: the ids reach the logs and the next
 * hop either way.
 */
const w3c = new W3CTraceContextPropagator();

/** Something with string headers: NATS's MsgHdrs, gRPC Metadata (through metadataCarrier), a Headers object. */
export interface HeaderCarrier {
  get(key: string): string | undefined;
  set(key: string, value: string): void;
}

/** Writes the active (or given) context's traceparent/tracestate into `carrier`; nothing when there is no trace. */
export function injectTrace(carrier: HeaderCarrier, ctx: Context = context.active()): void {
  w3c.inject(ctx, carrier, { set: (c, k, v) => c.set(k, v) });
}

/** The context a caller's traceparent names, as the parent of what this process does for it. */
export function extractTrace(carrier: HeaderCarrier | undefined, base: Context = ROOT_CONTEXT): Context {
  if (carrier === undefined) return base;
  return w3c.extract(base, carrier, {
    get: (c, k) => c.get(k) || undefined,
    keys: () => ["traceparent", "tracestate"],
  });
}

/** gRPC metadata as a carrier (values are arrays there; the first counts). */
export function metadataCarrier(metadata: { get(key: string): unknown[]; set(key: string, value: string): void }): HeaderCarrier {
  return {
    get: (k) => {
      const v = metadata.get(k)[0];
      return typeof v === "string" ? v : undefined;
    },
    set: (k, v) => metadata.set(k, v),
  };
}

export { propagation };

/** The active span's traceparent ("" when nothing is traced): what a durable record keeps to link back to it. */
export function currentTraceparent(): string {
  let value = "";
  injectTrace({ get: () => undefined, set: (k, v) => void (k === "traceparent" && (value = v)) });
  return value;
}

/** A link to the span a stored traceparent names (none for "" or a malformed one). */
export function linkTo(traceparent: string | undefined): Link[] {
  if (!traceparent) return [];
  const spanContext = trace.getSpanContext(extractTrace({ get: (k) => (k === "traceparent" ? traceparent : undefined), set: () => {} }));
  return spanContext === undefined ? [] : [{ context: spanContext }];
}
