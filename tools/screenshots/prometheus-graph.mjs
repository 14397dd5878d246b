#!/usr/bin/env node
// docs/operations/prometheus-graph.png: Prometheus's own graph page (Debian's prometheus, Debian's chromium
// driven by playwright-core) over a real local cluster (`attr-rag cluster --metrics`) while Asks and a batch of
// demo questions run. Prometheus scrapes the cluster's file_sd targets every second. Run from the repository
// root after `npm run build`: node tools/screenshots/prometheus-graph.mjs
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium } from "playwright-core";

const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "packages/cli/dist/main.js");
const OUT = join(ROOT, "docs/operations/prometheus-graph.png");
const dir = mkdtempSync(join(tmpdir(), "attr-rag-prom-shot-"));
const say = (line) => process.stderr.write(`prometheus-graph: ${line}\n`);

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

function run(args) {
  return new Promise((res) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => res({ code, out, err }));
  });
}

const cluster = spawn(process.execPath, [CLI, "cluster", "--metrics", "--quiet", "--port", "0", "--workers", "2", "--threads", "1", "--context-size", "16384"], { stdio: ["ignore", "pipe", "pipe"] });
let clusterOut = "";
cluster.stdout.on("data", (d) => (clusterOut += d));
cluster.stderr.on("data", (d) => process.stderr.write(d));
let prometheus;
let browser;
try {
  const deadline = Date.now() + 180_000;
  while (!/Prometheus file_sd targets: (\S+)/.test(clusterOut)) {
    if (Date.now() > deadline || cluster.exitCode !== null) throw new Error(`the cluster did not start:\n${clusterOut}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  const targets = /Prometheus file_sd targets: (\S+)/.exec(clusterOut)[1];
  const gateway = /gateway listening on (\S+)/.exec(clusterOut)[1];
  const port = await freePort();
  writeFileSync(join(dir, "prometheus.yml"), `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: attr-rag\n    file_sd_configs:\n      - files: [${JSON.stringify(targets)}]\n    relabel_configs:\n      - source_labels: [job]\n        target_label: job\n`);
  prometheus = spawn("prometheus", [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: "ignore" });
  say(`cluster at ${gateway}, prometheus on ${port}; asking`);
  const questions = readFileSync(join(ROOT, "examples/demo-corpus/questions.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l).question);
  const rows = join(dir, "batch.jsonl");
  writeFileSync(rows, questions.slice(0, 12).map((q, i) => JSON.stringify({ id: `q${i}`, question: q, max_tokens: 16 })).join("\n") + "\n");
  const asks = [];
  for (let i = 0; i < 4; i++) asks.push(run(["ask", questions[i % questions.length], "--server", gateway, "--max-tokens", "16"]));
  asks.push(run(["ask", " ", "--server", gateway]));
  const batch = await run(["batch", "submit", rows, "--server", gateway, "--wait"]);
  if (batch.code !== 0) say(`batch: ${batch.err}`);
  await Promise.all(asks);
  await new Promise((r) => setTimeout(r, 5_000)); // the last scrapes
  const q = (expr) => encodeURIComponent(expr);
  const g0 = 'sum by (rpc) (rate(attr_rag_ask_duration_seconds_count[30s]))';
  const g1 = "histogram_quantile(0.95, sum by (le, stage) (rate(attr_rag_ask_stage_duration_seconds_bucket[30s])))";
  const url = `http://127.0.0.1:${port}/graph?g0.expr=${q(g0)}&g0.tab=0&g0.range_input=5m&g1.expr=${q(g1)}&g1.tab=0&g1.range_input=5m`;
  browser = await chromium.launch({ executablePath: process.env.ATTR_RAG_CHROMIUM ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1300 } });
  await page.goto(url);
  await page.waitForSelector(".graph-chart canvas, canvas.flot-base", { timeout: 30_000 }).catch(() => {});
  await new Promise((r) => setTimeout(r, 3_000));
  mkdirSync(join(ROOT, "docs/operations"), { recursive: true });
  await page.screenshot({ path: OUT, fullPage: true });
  say(`wrote ${OUT}`);
} finally {
  await browser?.close();
  prometheus?.kill("SIGTERM");
  cluster.kill("SIGINT");
  await new Promise((r) => (cluster.exitCode !== null ? r() : cluster.once("exit", r)));
  rmSync(dir, { recursive: true, force: true });
}
