import { trace } from "@opentelemetry/api";
import { pino, type Logger, type LevelWithSilent } from "pino";
import pretty from "pino-pretty";
import { currentLogFields } from "./logContext.js";

export type LogFormat = "pretty" | "json";
export const LOG_FORMATS: readonly LogFormat[] = ["pretty", "json"];
const LEVELS: readonly LevelWithSilent[] = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

/**
 * Keys whose values never reach a log line, at the top level or one object down. The text of our own lines
 * is kept free of secrets by construction (a NATS URL is logged without its user part); this catches a whole
 * options object passed as a field.
 */
const REDACTED = ["token", "authToken", "password", "pass", "authorization", "secret", "credentials"].flatMap((k) => [k, `*.${k}`]);

let root: Logger | undefined;
let chosen: { format?: LogFormat; level?: string } = {};

/**
 * Sets the format and level before the first line is written (`--log-format`, `--log-level`); otherwise the
 * format follows stderr (a terminal: one readable line per event; a pipe or file: JSON) and the level comes
 * from ATTR_RAG_LOG_LEVEL (default info).
 */
export function configureLogs(options: { format?: string; level?: string }): void {
  if (options.format !== undefined && !LOG_FORMATS.includes(options.format as LogFormat)) {
    throw new Error(`--log-format must be one of ${LOG_FORMATS.join(", ")}, got "${options.format}"`);
  }
  if (options.level !== undefined) checkLevel(options.level, "--log-level");
  chosen = { ...chosen, ...(options.format !== undefined ? { format: options.format as LogFormat } : {}), ...(options.level !== undefined ? { level: options.level } : {}) };
  root = undefined;
}

function checkLevel(level: string, where: string): LevelWithSilent {
  if (!LEVELS.includes(level as LevelWithSilent)) throw new Error(`${where} must be one of ${LEVELS.join(", ")}, got "${level}"`);
  return level as LevelWithSilent;
}

function rootLogger(): Logger {
  if (root !== undefined) return root;
  const level = chosen.level ?? checkLevel(process.env.ATTR_RAG_LOG_LEVEL || "info", "ATTR_RAG_LOG_LEVEL");
  const format = chosen.format ?? (process.stderr.isTTY ? "pretty" : "json");
  const options = {
    level,
    base: { pid: process.pid },
    redact: { paths: REDACTED, censor: "[redacted]" },
    // Every line inside a request, batch item or job names it, and the trace it belongs to (when traced).
    mixin: () => {
      const span = trace.getActiveSpan()?.spanContext();
      const traced = span !== undefined && span.traceId !== "00000000000000000000000000000000" ? { trace_id: span.traceId, span_id: span.spanId } : {};
      return { ...currentLogFields(), ...traced };
    },
  };
  // Synchronous writes to stderr: a line written just before the process exits is not lost.
  root =
    format === "json"
      ? pino(options, pino.destination({ fd: 2, sync: true }))
      : pino(options, pretty({ destination: 2, sync: true, singleLine: true, colorize: process.stderr.isTTY === true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid,hostname,component", messageFormat: "{component}: {msg}" }));
  return root;
}

/** The logger of one part of the process ("gateway", "worker", "index", …): its lines carry `component`. */
export function logger(component: string): Logger {
  return rootLogger().child({ component });
}

/** A `(line) => void` log, as our services take, writing `level` lines of `component`. */
export function lineLog(component: string, level: "info" | "warn" | "error" = "info"): (line: string) => void {
  let child: Logger | undefined;
  let of: Logger | undefined;
  return (line) => {
    if (child === undefined || of !== root) {
      child = logger(component);
      of = root;
    }
    child[level](line);
  };
}
