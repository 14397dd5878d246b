import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Link, type Span } from "@opentelemetry/api";

/** Our tracer. Until startTracing() registers a provider it is OpenTelemetry's no-op one: a span costs a call. */
export const tracer = () => trace.getTracer("attr-rag");

/**
 * Runs `fn` inside a span named `name` (a child of the active span, or of `parent`), ending it when `fn`
 * settles; a failure is recorded on the span and rethrown.
 */
export async function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span) => Promise<T>, options: { parent?: Context; kind?: SpanKind; links?: Link[] } = {}): Promise<T> {
  const parent = options.parent ?? context.active();
  return tracer().startActiveSpan(name, { attributes, kind: options.kind ?? SpanKind.INTERNAL, links: options.links ?? [] }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message ?? String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

export { SpanKind };

/**
 * A span for work already done and timed with performance.now() readings, as a child of the active span: how
 * stages that run inside one call (A_full and the occluded answers in one native call; the selector's three
 * steps) still appear in order in a trace. Nothing when no span is active.
 */
export function recordSpan(name: string, startMs: number, endMs: number, attributes: Attributes = {}): void {
  if (trace.getActiveSpan() === undefined) return;
  tracer()
    .startSpan(name, { startTime: performance.timeOrigin + startMs, attributes }, context.active())
    .end(performance.timeOrigin + endMs);
}
