import { context, propagation, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";

export interface Tracing {
  /** Sends what is buffered now. */
  flush(): Promise<void>;
  /** Sends what is buffered, then stops exporting. */
  shutdown(): Promise<void>;
}

let running: { provider: NodeTracerProvider } | undefined;

/**
 * Starts exporting spans over OTLP/HTTP when the standard OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, with OTEL_SERVICE_NAME or `service` as the service name;
 * otherwise does nothing and spans stay OpenTelemetry's no-ops. Once per process.
 */
export function startTracing(service: string, env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  if (running !== undefined) return { flush: () => running!.provider.forceFlush(), shutdown: () => running!.provider.shutdown() };
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  if (env.OTEL_SDK_DISABLED === "true") return undefined;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || service }),
    // The exporter reads the endpoint, headers and timeout from the standard OTEL_EXPORTER_OTLP_* variables.
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: 1_000 })],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  running = { provider };
  return { flush: () => provider.forceFlush(), shutdown: () => provider.shutdown() };
}

/** Whether spans are being recorded and exported in this process. */
export function tracingEnabled(): boolean {
  return running !== undefined;
}

export { context, propagation, trace };
