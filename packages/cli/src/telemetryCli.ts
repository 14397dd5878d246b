// What every long-running role (serve, worker, index serve, selector, cluster) shares for operators: a
// Prometheus /metrics port, OpenTelemetry export when the standard OTEL_* variables ask for it, and the log
// format. The options are added to those commands and applied before their action runs.
import type { Command } from "commander";
import { configureLogs, logger, startMetricsServer, startTracing, type MetricsServer, type Tracing } from "@attr-rag/telemetry";
import { CliError } from "./cliError.js";
import { parsePort } from "./serverCli.js";

export interface TelemetryFlags {
  metricsPort?: string;
  metricsHost?: string;
}

/** The commands that get --metrics-port/--metrics-host, and the service name their spans carry. */
export const ROLE_COMMANDS: Record<string, string> = {
  serve: "attr-rag-gateway",
  worker: "attr-rag-worker",
  "index serve": "attr-rag-index",
  selector: "attr-rag-selector",
  // An embedded gateway in the bench's process: `bench telemetry` measures it with and without telemetry.
  "bench throughput": "attr-rag-gateway",
};

export function addMetricsOptions(command: Command): Command {
  return command
    .option("--metrics-port <n>", "serve Prometheus metrics at http://HOST:PORT/metrics (0: a free one); off unless given")
    .option("--metrics-host <host>", "address the metrics port binds (0.0.0.0 for a scraper on another machine)", "127.0.0.1");
}

/** The program-wide log options, read before any command runs. */
export function addLogOptions(program: Command): Command {
  return program
    .option("--log-format <format>", "log lines on stderr: pretty (one readable line each) or json; default pretty on a terminal, json otherwise")
    .option("--log-level <level>", "trace, debug, info, warn, error, fatal or silent; default ATTR_RAG_LOG_LEVEL or info");
}

export function applyLogOptions(o: { logFormat?: string; logLevel?: string }): void {
  try {
    configureLogs({ ...(o.logFormat !== undefined ? { format: o.logFormat } : {}), ...(o.logLevel !== undefined ? { level: o.logLevel } : {}) });
  } catch (err) {
    throw new CliError((err as Error).message, 2);
  }
}

/** What a role started for operators; stop() closes the metrics port and sends the last spans. */
export interface RoleTelemetry {
  readonly metrics: MetricsServer | undefined;
  stop(): Promise<void>;
}

export async function startRoleTelemetry(service: string, o: TelemetryFlags): Promise<RoleTelemetry> {
  let tracing: Tracing | undefined;
  try {
    tracing = startTracing(service);
  } catch (err) {
    throw new CliError(`cannot start OpenTelemetry export (OTEL_EXPORTER_OTLP_ENDPOINT=${process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? ""}): ${(err as Error).message}`, 2);
  }
  const log = logger("telemetry");
  if (tracing !== undefined) log.info(`exporting traces over OTLP to ${process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_ENDPOINT} as ${process.env.OTEL_SERVICE_NAME || service}`);
  let metrics: MetricsServer | undefined;
  if (o.metricsPort !== undefined) {
    const port = parsePort(o.metricsPort, "--metrics-port");
    const host = o.metricsHost ?? "127.0.0.1";
    metrics = await startMetricsServer({ host, port }).catch((err: unknown) => {
      throw new CliError((err as Error).message, 2);
    });
    // On stdout like "listening on": scripts and tests read the port from it.
    process.stdout.write(`metrics on ${metrics.address}/metrics\n`);
  }
  return {
    metrics,
    stop: async () => {
      await metrics?.close();
      await tracing?.shutdown().catch((err: unknown) => log.warn(`sending the last spans failed: ${(err as Error).message}`));
    },
  };
}
