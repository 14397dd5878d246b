// What an operator sees of a running cluster, with the real parts: Debian's Prometheus scraping a local cluster
// (gateway, index, 2 workers, selector on real nats-server, one process each), an OTLP receiver collecting the
// processes' traces, and their logs as they wrote them.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials, Metadata } from "@grpc/grpc-js";
import { AskRequest, AttrRagServiceClient, type AskResponse } from "@attr-rag/contracts";
import { natsServerMissing } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalCluster } from "@attr-rag/cluster";
import { until, rowsFile } from "./helpers/batches.js";
import { PASSWORDS, startCluster } from "./helpers/cluster.js";
import { OtlpReceiver, type ReceivedSpan } from "./helpers/otlpReceiver.js";
import { PrometheusServer, prometheusMissing } from "./helpers/prometheus.js";
import { cleanEnv, ingestDemoCorpus, MAIN, REPO_ROOT, runCli, TEST_MODEL } from "./helpers/runCli.js";
import { spawn } from "node:child_process";

const dir = mkdtempSync(join(tmpdir(), "attr-rag-observability-"));
const TOKEN = "obs-token-5f1c2e9a7d";
const ENGINE = ["--context-size", "16384", "--sequences", "4", "--threads", "1"];
const REQUEST = ["--k", "6", "--max-tokens", "12"];
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";
const STAGES = ["retrieve", "align", "rerank", "initial_answer", "occlusion", "attribution", "selection", "gap_fill", "final_answer"];

const missing = natsServerMissing() ?? prometheusMissing();
let cluster: LocalCluster;
let prometheus: PrometheusServer;
let receiver: OtlpReceiver;

/** One Ask over gRPC with the client's own traceparent; resolves with its final status code. */
function ask(question: string, traceId: string): Promise<number> {
  const client = new AttrRagServiceClient(cluster.gatewayAddress, credentials.createInsecure());
  const metadata = new Metadata();
  metadata.set("authorization", `Bearer ${TOKEN}`);
  metadata.set("traceparent", `00-${traceId}-${CLIENT_SPAN}-01`);
  return new Promise<number>((resolve) => {
    const call = client.ask(AskRequest.fromPartial({ question }), metadata);
    call.on("data", (_: AskResponse) => {});
    call.on("status", (s) => {
      client.close();
      resolve(s.code);
    });
    call.on("error", () => {});
  });
}

const num = (series: { value: [number, string] }[]) => series.map((s) => Number(s.value[1]));

beforeAll(async () => {
  if (missing !== undefined) return;
  const store = join(dir, "store");
  expect((await ingestDemoCorpus(store)).code).toBe(0);
  receiver = await OtlpReceiver.start();
  cluster = await startCluster({
    store,
    workers: 2,
    engine: ENGINE,
    // A redelivered job would run (and be traced) twice; nothing here is about redelivery.
    ackWaitSeconds: 30,
    gatewayArgs: [...REQUEST, "--auth-token", TOKEN],
    metrics: true,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: "200" },
  });
  const targets = await cluster.metricsTargets();
  const jobs = [...new Set(targets.map((t) => t.role))].map((role) => ({ job: `attr-rag-${role}`, targets: targets.filter((t) => t.role === role).map((t) => t.address) }));
  prometheus = await PrometheusServer.start(jobs);
}, 240_000);

afterAll(async () => {
  await prometheus?.[Symbol.asyncDispose]();
  await cluster?.[Symbol.asyncDispose]();
  await receiver?.[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(missing !== undefined)(`observability (real Prometheus, OTLP, nats-server)${missing ? ` (skipped: ${missing})` : ""}`, () => {
  it("observability - Prometheus after one Ask, one refused Ask and a 3-item batch: Asks by code, stage histograms, decode calls on the worker that ran jobs, 3 items succeeded, every dashboard query answers", async () => {
    expect(await ask("Explain all the required steps of the acetaminophen synthesis.", TRACE_ID)).toBe(0);
    expect(await ask("   ", "0af7651916cd43dd8448eb211c80319c")).toBe(3); // INVALID_ARGUMENT: an empty question
    const rows = rowsFile(dir, "obs", 3);
    const batch = await runCli(["batch", "submit", rows, "--server", cluster.gatewayAddress, "--token", TOKEN, "--wait", "--out", join(dir, "out.jsonl")]);
    expect(batch.code, batch.stderr + cluster.logs()).toBe(0);

    // Every process is scraped (1 s interval); the batch's items are counted once Prometheus has scraped them.
    await until(async () => ((await prometheus.targets()).every((t) => t.health === "up") ? true : undefined), "every target up", 60_000);
    await until(async () => (num(await prometheus.query('sum(attr_rag_batch_items_total{state="succeeded"})'))[0] === 3 ? true : undefined), "3 batch items in Prometheus", 60_000);

    const byCode = await prometheus.query('sum by (code) (attr_rag_requests_total{service="attr_rag.v1.AttrRagService",method="Ask",transport="grpc"})');
    expect(Object.fromEntries(byCode.map((s) => [s.metric.code, Number(s.value[1])]))).toEqual({ OK: 1, INVALID_ARGUMENT: 1 });
    // The Ask and the three batch items ran every stage of the pipeline.
    for (const stage of STAGES) {
      expect(num(await prometheus.query(`sum(attr_rag_ask_stage_duration_seconds_count{rpc="Ask",stage="${stage}"})`)), stage).toEqual([4]);
    }
    expect(num(await prometheus.query('sum(attr_rag_ask_duration_seconds_count{rpc="Ask"})'))).toEqual([4]);
    // Decode calls > 0 on each worker that ran a job (read from its own /metrics), and on no other process.
    const ranJobs = (await prometheus.query('sum by (instance) (attr_rag_engine_jobs_total{outcome="ok"}) > 0')).map((s) => s.metric.instance).sort();
    const decoded = (await prometheus.query("sum by (instance, job) (attr_rag_engine_decode_calls_total) > 0")).map((s) => ({ instance: s.metric.instance, job: s.metric.job }));
    expect(ranJobs.length).toBeGreaterThanOrEqual(1);
    expect(decoded.map((d) => d.instance).sort()).toEqual(ranJobs);
    expect(new Set(decoded.map((d) => d.job))).toEqual(new Set(["attr-rag-worker"]));
    // The job queues come from JetStream through the gateway (what GetCluster shows): the model's two lanes, drained.
    const pending = await prometheus.query("attr_rag_job_queue_pending");
    expect(pending.map((s) => s.metric.consumer).sort()).toEqual(["attr-rag-workers-stories260K", "attr-rag-workers-stories260K-batch"]);
    expect(num(pending)).toEqual([0, 0]);
    expect(num(await prometheus.query("sum(attr_rag_index_chunks)"))[0]).toBeGreaterThan(0);

    // The dashboard's every query returns a series (Grafana's $__rate_interval as a fixed window here).
    const dashboard = JSON.parse(readFileSync(join(REPO_ROOT, "deploy/grafana/attr-rag-dashboard.json"), "utf8")) as { panels: { title: string; targets: { expr: string }[] }[] };
    const empty: string[] = [];
    for (const panel of dashboard.panels) {
      for (const t of panel.targets) if ((await prometheus.query(t.expr.replaceAll("$__rate_interval", "1m"))).length === 0) empty.push(`${panel.title}: ${t.expr}`);
    }
    expect(empty).toEqual([]);
  });

  it("observability - one trace across gateway, NATS, worker and selector: the client's trace id, stages in order, parent links", async () => {
    const wanted = ["stage.final_answer", "engine.occlusion", "stage.attribution", "stage.initial_answer"];
    const spans = await until(async () => {
      const t = receiver.trace(TRACE_ID);
      return wanted.every((n) => t.some((s) => s.name === n)) ? t : undefined;
    }, "the Ask's spans at the OTLP receiver", 30_000);
    expect(receiver.refused).toEqual([]);
    const one = (name: string, service?: string): ReceivedSpan => {
      const found = spans.filter((s) => s.name === name && (service === undefined || s.service === service));
      expect(found, `${name} (${service ?? "any"})`).toHaveLength(1);
      return found[0]!;
    };
    // The gateway's server span continues the client's (its parent is the client's span id).
    const root = one("attr_rag.v1.AttrRagService/Ask", "attr-rag-gateway");
    expect(root.parentSpanId).toBe(CLIENT_SPAN);
    expect(new Set(spans.map((s) => s.service))).toEqual(new Set(["attr-rag-gateway", "attr-rag-worker", "attr-rag-selector", "attr-rag-index"]));
    // The gateway's stages are children of the Ask, in pipeline order.
    const stages = ["stage.retrieve", "stage.align", "stage.rerank", "stage.occlude", "stage.select", "stage.final_answer"].map((n) => one(n, "attr-rag-gateway"));
    for (const s of stages) expect(s.parentSpanId, s.name).toBe(root.spanId);
    // (The SDK's start times have millisecond precision: a stage may start up to 1 ms "before" the last ended.)
    for (let i = 1; i < stages.length; i++) expect(stages[i]!.startNs >= stages[i - 1]!.endNs - 1_000_000n && stages[i]!.startNs >= stages[i - 1]!.startNs, `${stages[i]!.name} after ${stages[i - 1]!.name}: ${stages.map((s) => `${s.name} ${s.startNs}-${s.endNs}`).join(", ")}`).toBe(true);
    // Occlusion: gateway stage → producer span (NATS publish) → the worker's consumer span → the engine job →
    // A_full, then the occluded answers.
    const occlude = stages[3]!;
    const produce = spans.find((s) => s.name === "nats.job occlusion" && s.service === "attr-rag-gateway")!;
    expect(produce.parentSpanId).toBe(occlude.spanId);
    const consume = spans.find((s) => s.name === "nats.job occlusion" && s.service === "attr-rag-worker")!;
    expect(consume.parentSpanId).toBe(produce.spanId);
    const job = one("engine.occlusion", "attr-rag-worker");
    expect(job.parentSpanId).toBe(consume.spanId);
    expect(Number(job.attributes["attr_rag.engine.tokens_evaluated"])).toBeGreaterThan(0);
    const [initial, occlusion] = [one("stage.initial_answer"), one("stage.occlusion")];
    expect([initial.parentSpanId, occlusion.parentSpanId]).toEqual([job.spanId, job.spanId]);
    expect(occlusion.startNs >= initial.startNs).toBe(true);
    // Selection: the gateway's request → the selector's server span → attribution, selection, gap fill in order.
    const select = stages[4]!;
    const request = spans.find((s) => s.service === "attr-rag-gateway" && s.name.startsWith("nats.request") && s.parentSpanId === select.spanId)!;
    expect(request, "the gateway's selector request").toBeDefined();
    const served = spans.find((s) => s.service === "attr-rag-selector" && s.parentSpanId === request.spanId)!;
    expect(served.name).toMatch(/^nats\.server attr-rag-selector\//);
    const steps = ["stage.attribution", "stage.selection", "stage.gap_fill"].map((n) => one(n, "attr-rag-selector"));
    for (const s of steps) expect(s.parentSpanId).toBe(served.spanId);
    for (let i = 1; i < steps.length; i++) expect(steps[i]!.startNs >= steps[i - 1]!.startNs).toBe(true);
    // Retrieval reached the index over NATS inside the retrieve stage.
    const search = spans.find((s) => s.service === "attr-rag-index" && s.name.startsWith("nats.server"))!;
    const searchRequest = spans.find((s) => s.spanId === search.parentSpanId)!;
    expect(searchRequest.parentSpanId).toBe(stages[0]!.spanId);
  });

  it("observability - each batch item is a trace of its own, linked to the span its batch was created in", async () => {
    const created = await until(async () => receiver.spans.find((s) => s.name === "attr_rag.v1.BatchService/CreateBatch" && s.attributes["attr_rag.batch.id"] !== undefined), "the CreateBatch span", 30_000);
    const items = await until(async () => {
      const found = receiver.spans.filter((s) => s.name === "batch.item" && s.attributes["attr_rag.batch.id"] === created.attributes["attr_rag.batch.id"]);
      return found.length === 3 ? found : undefined;
    }, "3 batch.item spans", 30_000);
    expect(items.map((s) => s.attributes["attr_rag.batch.item_index"]).sort()).toEqual([0, 1, 2]);
    for (const item of items) {
      expect(item.parentSpanId).toBe("");
      expect(item.traceId).not.toBe(created.traceId);
      expect(item.links).toEqual([expect.objectContaining({ traceId: created.traceId, spanId: created.spanId })]);
      // The item's Ask ran inside it: its stages are in the item's trace.
      expect(receiver.trace(item.traceId).some((s) => s.name === "stage.final_answer")).toBe(true);
    }
  });

  it("observability - the processes' logs are JSON lines naming request, trace and job; no password or token in any of them", async () => {
    const logs = cluster.logs();
    for (const secret of [TOKEN, ...Object.values(PASSWORDS)]) expect(logs.includes(secret), `a secret appears in the logs`).toBe(false);
    const worker = cluster.workers.map((w) => w.stderr).join("");
    const lines = worker.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const l of lines) expect(Object.keys(l)).toEqual(expect.arrayContaining(["level", "time", "msg", "component"]));
    const running = lines.filter((l) => typeof l.msg === "string" && /running occlusion job/.test(l.msg) && l.trace_id === TRACE_ID);
    expect(running.length, JSON.stringify(running)).toBe(1);
    expect(running[0]).toMatchObject({ component: "worker", request_id: expect.any(String), job_id: expect.any(String) });
  });
});

describe("logs of an attr-rag command", () => {
  /** `attr-rag serve` embedded until it listens, then stopped: its stderr. */
  async function serveLog(extra: readonly string[]): Promise<string> {
    const store = join(dir, "log-store");
    expect((await ingestDemoCorpus(store)).code).toBe(0);
    const child = spawn(process.execPath, [MAIN, "serve", "--store", store, "--model", TEST_MODEL, "--port", "0", ...extra], { stdio: ["ignore", "pipe", "pipe"], env: cleanEnv() });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const exited = new Promise((r) => child.once("exit", r));
    await until(async () => (/listening on/.test(out) ? true : child.exitCode !== null ? Promise.reject(new Error(err)) : undefined), "the gateway to listen", 60_000);
    child.kill("SIGTERM");
    await exited;
    return err;
  }

  it("logs - --log-format pretty: one readable line per event; piped without it: JSON lines; a bad format is refused", async () => {
    const pretty = (await serveLog(["--log-format", "pretty"])).trim().split("\n");
    expect(pretty[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: gateway: opening store /);
    expect(pretty.some((l) => /^\[[\d:.]+\] INFO: gateway: SIGTERM: stopping the gateway$/.test(l))).toBe(true);
    const json = (await serveLog([])).trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(json[0]).toMatchObject({ level: 30, component: "gateway", msg: expect.stringMatching(/^opening store /) });
    expect(json.map((l) => l.msg)).toContain("stopped");
    const bad = await runCli(["--log-format", "yaml", "serve"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--log-format must be one of pretty, json, got "yaml"/);
  });
});
