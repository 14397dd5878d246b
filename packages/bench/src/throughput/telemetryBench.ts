// `attr-rag bench telemetry`: what metrics and tracing cost. The same `bench throughput` workload runs as a
// child process with telemetry off (no metrics port, no exporter) and on (a /metrics port scraped every second,
// and every span exported over OTLP to a local sink), alternating off/on so drift on a shared machine falls on
// both; the medians of Asks/minute are compared.
import { spawn } from "node:child_process";
import { freePort } from "../freePort.js";
import { CLI_MAIN } from "@attr-rag/cluster";
import { startOtlpSink } from "./otlpSink.js";

export interface TelemetryBenchOptions {
  readonly runs: number;
  /** `bench throughput` flags of every run (the workload). */
  readonly throughputArgs: readonly string[];
  readonly scrapeIntervalMs: number;
  readonly onProgress: (line: string) => void;
}

export interface TelemetryRun {
  mode: "off" | "on";
  asks_per_minute: number;
  wall_ms: number;
  latency_p50_ms: number;
  scrapes: number;
  spans: number;
}

export interface TelemetryBenchReport {
  bench: "telemetry";
  settings: { runs: number; throughput_args: string[]; scrape_interval_ms: number };
  runs: TelemetryRun[];
  median_asks_per_minute: { off: number; on: number };
  /** 1 − on ÷ off: the share of throughput telemetry costs (negative: on was faster, i.e. noise). */
  overhead: number;
  goal: number;
}

export const TELEMETRY_OVERHEAD_GOAL = 0.03;

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export async function runTelemetryBench(o: TelemetryBenchOptions): Promise<TelemetryBenchReport> {
  const sink = await startOtlpSink();
  const runs: TelemetryRun[] = [];
  try {
    for (let i = 0; i < o.runs; i++) {
      for (const mode of ["off", "on"] as const) {
        const spansBefore = sink.spans;
        const run = await throughputRun(mode, o, sink.endpoint);
        runs.push({ ...run, spans: sink.spans - spansBefore });
        o.onProgress(`run ${i + 1}/${o.runs} telemetry ${mode}: ${run.asks_per_minute.toFixed(2)} Asks/minute${mode === "on" ? ` (${run.scrapes} scrapes, ${sink.spans - spansBefore} spans)` : ""}`);
      }
    }
  } finally {
    await sink.close();
  }
  const off = median(runs.filter((r) => r.mode === "off").map((r) => r.asks_per_minute));
  const on = median(runs.filter((r) => r.mode === "on").map((r) => r.asks_per_minute));
  return {
    bench: "telemetry",
    settings: { runs: o.runs, throughput_args: [...o.throughputArgs], scrape_interval_ms: o.scrapeIntervalMs },
    runs,
    median_asks_per_minute: { off, on },
    overhead: 1 - on / off,
    goal: TELEMETRY_OVERHEAD_GOAL,
  };
}

async function throughputRun(mode: "off" | "on", o: TelemetryBenchOptions, endpoint: string): Promise<Omit<TelemetryRun, "spans">> {
  const port = mode === "on" ? await freePort() : undefined;
  const args = [CLI_MAIN, "bench", "throughput", ...o.throughputArgs, "--json", ...(port !== undefined ? ["--metrics-port", String(port)] : [])];
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith("OTEL_")) delete env[k];
  if (mode === "on") Object.assign(env, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: "attr-rag-bench" });
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err = (err + d).slice(-20_000)));
  // Like Prometheus, but every second: the scrape reads every source the process registered.
  let scrapes = 0;
  const scraper =
    port !== undefined
      ? setInterval(() => {
          fetch(`http://127.0.0.1:${port}/metrics`).then(
            (r) => r.text().then(() => void (r.ok && scrapes++)),
            () => {},
          );
        }, o.scrapeIntervalMs)
      : undefined;
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  if (scraper !== undefined) clearInterval(scraper);
  if (code !== 0) throw new Error(`bench throughput (telemetry ${mode}) exited ${code}:\n${err}`);
  const line = out.trim().split("\n").at(-1)!;
  const report = JSON.parse(line) as { runs: { asks_per_minute: number; wall_ms: number; latency: { p50_ms: number } }[] };
  const last = report.runs.at(-1)!;
  if (mode === "on" && scrapes === 0) throw new Error("telemetry on: no scrape of /metrics succeeded; the metrics port did not answer");
  return { mode, asks_per_minute: last.asks_per_minute, wall_ms: last.wall_ms, latency_p50_ms: last.latency.p50_ms, scrapes };
}

