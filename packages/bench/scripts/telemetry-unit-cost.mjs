#!/usr/bin/env node
// What one scrape and one span cost, measured where they are paid, for docs/operations.md: CPU time of an
// embedded `attr-rag serve --metrics-port` process per GET /metrics (read from /proc, the server's own CPU, so
// the client's is not counted), and CPU time per span of this process with the real tracer provider exporting
// every span over OTLP/HTTP to a local sink. With the Asks/minute of a bench run these bound what telemetry
// can cost, below the spread of `bench telemetry`'s runs. Prints one JSON line.
// Run from the repository root after `npm run build`: node packages/bench/scripts/telemetry-unit-cost.mjs > bench/results/telemetry-unit-cost.json
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:http";
import { join, resolve } from "node:path";
import { describeRun } from "@attr-rag/bench";

const ROOT = resolve(import.meta.dirname, "../../..");
const CLI = join(ROOT, "packages/cli/dist/main.js");
const SCRAPES = 300;
const SPANS = 20_000;
const TICK_MS = 1000 / 100; // USER_HZ

/** utime + stime of a process, ms. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** The demo corpus in a store of its own: the server scraped must serve something, and no earlier run is assumed. */
function demoStore(dir) {
  const store = join(dir, "store");
  execFileSync(process.execPath, [CLI, "ingest", join(ROOT, "examples/demo-corpus/corpus.jsonl"), "--store", store], { stdio: ["ignore", "ignore", "inherit"] });
  return store;
}

async function scrapeCost(store) {
  const child = spawn(process.execPath, [CLI, "serve", "--store", store, "--model", join(ROOT, "examples/models/stories260K.gguf"), "--port", "0", "--metrics-port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err = (err + d).slice(-4000)));
  const deadline = Date.now() + 60_000;
  while (!/metrics on (\S+)\/metrics/.test(out) || !/listening on/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`serve did not start: ${out}${err}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = `http://${/metrics on (\S+)\/metrics/.exec(out)[1]}/metrics`;
  for (let i = 0; i < 20; i++) await (await fetch(url)).text(); // warm up
  await new Promise((r) => setTimeout(r, 500));
  const before = cpuMs(child.pid);
  const t0 = performance.now();
  let bytes = 0;
  for (let i = 0; i < SCRAPES; i++) bytes += (await (await fetch(url)).text()).length;
  const wall = performance.now() - t0;
  const cpu = cpuMs(child.pid) - before;
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  return { scrapes: SCRAPES, server_cpu_ms_per_scrape: cpu / SCRAPES, wall_ms_per_scrape: wall / SCRAPES, bytes_per_scrape: Math.round(bytes / SCRAPES) };
}

async function spanCost() {
  let received = 0;
  const sink = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      for (const rs of JSON.parse(Buffer.concat(chunks).toString()).resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) received += ss.spans?.length ?? 0;
      res.end("{}");
    });
  });
  await new Promise((r) => sink.listen(0, "127.0.0.1", r));
  const { startTracing, inSpan, recordSpan } = await import("@attr-rag/telemetry");
  // The exporter reads the standard variable, as in a role.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${sink.address().port}`;
  const tracing = startTracing("attr-rag-cost");
  // A parent with children, as an Ask's stages and jobs are; attributes like an engine job's.
  // Flushed every 500 spans: the processor's queue (2,048) never overflows, so every span is sent, as at a
  // real Ask rate.
  const work = async (n) => {
    for (let i = 0; i < n; i += 10) {
      if (i % 500 === 0) await tracing.flush();
      await inSpan("bench.ask", { "attr_rag.request.id": String(i) }, async () => {
        for (let k = 0; k < 8; k++) await inSpan(`stage.${k}`, { "attr_rag.engine.tokens_evaluated": k }, async () => undefined);
        const t = performance.now();
        recordSpan("stage.recorded", t - 1, t);
      });
    }
  };
  await work(1_000); // warm up
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await work(SPANS);
  await tracing.shutdown(); // every span serialised and sent
  const cpu = process.cpuUsage(c0);
  const wall = performance.now() - t0;
  sink.close();
  return { spans: SPANS, received_at_sink: received, cpu_us_per_span: (cpu.user + cpu.system) / SPANS, wall_us_per_span: (wall * 1000) / SPANS };
}

const run = { ...describeRun(), command: "node packages/bench/scripts/telemetry-unit-cost.mjs" };
const dir = mkdtempSync(join(tmpdir(), "attr-rag-unit-cost-"));
let scrape;
try {
  scrape = await scrapeCost(demoStore(dir));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const spans = await spanCost();
process.stdout.write(`${JSON.stringify({ bench: "telemetry-unit-cost", scrape, spans, run })}\n`);
