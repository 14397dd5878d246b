import type { Command } from "commander";
import { positiveInt } from "../parseArgs.js";
import { describeRun, runTelemetryBench } from "@attr-rag/bench";

interface BenchTelemetryFlags {
  runs: string;
  asks: string;
  concurrency: string;
  maxTokens: string;
  threads: string;
  scrapeInterval: string;
  model?: string;
  json?: boolean;
}

/** `attr-rag bench telemetry`: `bench throughput` with metrics and tracing off, then on, alternating. */
export function registerBenchTelemetryCommand(bench: Command): void {
  bench
    .command("telemetry")
    .summary("what metrics and tracing cost: bench throughput with telemetry off and on, median of --runs each")
    .description(
      [
        "Runs `attr-rag bench throughput` as a child process --runs times with telemetry off and --runs times on,",
        "alternating. On: --metrics-port, scraped every --scrape-interval ms, and OTEL_EXPORTER_OTLP_ENDPOINT pointing",
        "at a local OTLP/HTTP sink that receives every span. Reports the median Asks/minute of each and the overhead",
        "(1 − on ÷ off). Progress on stderr.",
      ].join("\n"),
    )
    .option("--runs <n>", "runs of each mode", "3")
    .option("--asks <n>", "Asks per run", "8")
    .option("--concurrency <n>", "Asks in flight at once", "4")
    .option("--max-tokens <n>", "new tokens per answer", "16")
    .option("--threads <n>", "engine threads", "2")
    .option("--scrape-interval <ms>", "how often /metrics is scraped while telemetry is on", "1000")
    .option("--model <path|name>", "generator GGUF (default: the demo model)")
    .option("--json", "print the report as one JSON line")
    .action(async (o: BenchTelemetryFlags) => {
      const run = describeRun();
      const throughputArgs = [
        "--asks",
        String(positiveInt("--asks", o.asks)),
        "--concurrency",
        String(positiveInt("--concurrency", o.concurrency)),
        "--max-tokens",
        String(positiveInt("--max-tokens", o.maxTokens)),
        "--threads",
        String(positiveInt("--threads", o.threads)),
        ...(o.model !== undefined ? ["--model", o.model] : []),
      ];
      const report = await runTelemetryBench({
        runs: positiveInt("--runs", o.runs),
        throughputArgs,
        scrapeIntervalMs: positiveInt("--scrape-interval", o.scrapeInterval),
        onProgress: (line) => process.stderr.write(`bench telemetry: ${line}\n`),
      });
      if (o.json) {
        process.stdout.write(`${JSON.stringify({ ...report, model: o.model ?? "examples/models/stories260K.gguf", run })}\n`);
        return;
      }
      const m = report.median_asks_per_minute;
      console.log(`median Asks/minute: off ${m.off.toFixed(2)}, on ${m.on.toFixed(2)}: telemetry costs ${(report.overhead * 100).toFixed(1)} % (goal ≤ ${(report.goal * 100).toFixed(0)} %)`);
    });
}
