// The telemetry package on its own: the metrics port, trace context in headers, the log's redaction, URLs
// stripped of credentials. The whole picture (Prometheus, OTLP, a cluster's logs) is in the CLI's
// observability test.
import { spawnSync } from "node:child_process";
import { networkInterfaces } from "node:os";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { counter, extractTrace, injectTrace, MetricSources, gauge, startMetricsServer, trace, withoutCredentials, type HeaderCarrier } from "../src/index.js";

const carrier = (): HeaderCarrier & { values: Map<string, string> } => {
  const values = new Map<string, string>();
  return { values, get: (k) => values.get(k), set: (k, v) => void values.set(k, v) };
};

describe("telemetry", () => {
  it("metrics server - GET /metrics serves the registry (ours and Node's defaults); other paths 404, other methods 405", async () => {
    const c = counter({ name: "attr_rag_test_events_total", help: "events in this test", labelNames: ["kind"] });
    c.inc({ kind: "a" }, 3);
    const server = await startMetricsServer({ port: 0 });
    try {
      const res = await fetch(`http://${server.address}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      expect(text).toMatch(/^attr_rag_test_events_total\{kind="a"\} 3$/m);
      expect(text).toMatch(/^nodejs_eventloop_lag_seconds \d/m);
      expect((await fetch(`http://${server.address}/other`)).status).toBe(404);
      expect((await fetch(`http://${server.address}/metrics`, { method: "POST" })).status).toBe(405);
    } finally {
      await server.close();
    }
  });

  it("metrics server - by default the socket is bound to loopback only: its bound address is 127.0.0.1, and this machine's other addresses are refused", async () => {
    const server = await startMetricsServer({ port: 0 });
    try {
      expect(server.address).toBe(`127.0.0.1:${server.port}`);
      const outside = Object.values(networkInterfaces())
        .flat()
        .find((i) => i !== undefined && i.family === "IPv4" && !i.internal);
      if (outside !== undefined) {
        const reached = await fetch(`http://${outside.address}:${server.port}/metrics`).then(
          (r) => `answered ${r.status}`,
          (err: unknown) => String((err as { cause?: { code?: string } }).cause?.code),
        );
        expect(reached).toBe("ECONNREFUSED");
      }
    } finally {
      await server.close();
    }
  });

  it("metrics server - a taken port fails with what to do", async () => {
    const first = await startMetricsServer({ port: 0 });
    try {
      await expect(startMetricsServer({ port: first.port })).rejects.toThrow(/port is in use; pick another --metrics-port/);
    } finally {
      await first.close();
    }
  });

  it("metric sources - gauges that read live sources are created on the first add and follow adds and removes", async () => {
    const registered: string[] = [];
    const queues = new MetricSources<{ depth: number }>(() => {
      registered.push("depth");
      gauge({
        name: "attr_rag_test_depth",
        help: "depth of the test queues",
        collect() {
          this.set(queues.items.reduce((n, q) => n + q.depth, 0));
        },
      });
    });
    expect(registered).toEqual([]);
    const a = { depth: 2 };
    const removeA = queues.add(a);
    queues.add({ depth: 5 });
    expect(registered).toEqual(["depth"]);
    const server = await startMetricsServer({ port: 0 });
    try {
      const read = async () => Number(/^attr_rag_test_depth (\S+)$/m.exec(await (await fetch(`http://${server.address}/metrics`)).text())![1]);
      expect(await read()).toBe(7);
      a.depth = 4;
      expect(await read()).toBe(9);
      removeA();
      expect(await read()).toBe(5);
    } finally {
      await server.close();
    }
  });

  it("trace context - a traceparent round-trips through headers; none in, none out; a malformed one is ignored", () => {
    const incoming = carrier();
    incoming.set("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    const ctx = extractTrace(incoming);
    expect(trace.getSpanContext(ctx)).toMatchObject({ traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1 });
    const outgoing = carrier();
    injectTrace(outgoing, ctx);
    expect(outgoing.values.get("traceparent")).toBe("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    const none = carrier();
    injectTrace(none, extractTrace(carrier()));
    expect(none.values.size).toBe(0);
    const bad = carrier();
    bad.set("traceparent", "00-not-a-trace-01");
    expect(trace.getSpanContext(extractTrace(bad))).toBeUndefined();
  });

  it("credentials - URLs lose their user part (one URL or a list); other text is kept", () => {
    expect(withoutCredentials("nats://alice:s3cret@nats.example:4222")).toBe("nats://nats.example:4222");
    expect(withoutCredentials("nats://a:b@h1:4222,nats://c:d@h2:4222")).toBe("nats://h1:4222,nats://h2:4222");
    expect(withoutCredentials("tls://token@host:4222")).toBe("tls://host:4222");
    expect(withoutCredentials("nats://127.0.0.1:4222")).toBe("nats://127.0.0.1:4222");
    expect(withoutCredentials("user:pass@host:4222")).toBe("host:4222");
  });

  it("credentials - a password holding / @ : or %-escapes never survives, alone or in a list", () => {
    const cases: [string, string][] = [
      ["nats://a:s3cret@127.0.0.1:9", "nats://127.0.0.1:9"],
      ["nats://a:pa/ss@127.0.0.1:9", "nats://127.0.0.1:9"],
      ["nats://a:p@ss@127.0.0.1:9", "nats://127.0.0.1:9"],
      ["nats://a:p:a:ss@127.0.0.1:9", "nats://127.0.0.1:9"],
      ["nats://a:pa%2Fss%40x@127.0.0.1:9", "nats://127.0.0.1:9"],
      ["nats://a:pa?ss#x@127.0.0.1:9", "nats://127.0.0.1:9"],
      ["nats://h1:4222, nats://a:pa/ss@h2:4222,a:p@ss@h3:4222", "nats://h1:4222, nats://h2:4222,h3:4222"],
      ["tok/en@h:4222", "h:4222"],
    ];
    for (const [url, shown] of cases) {
      const out = withoutCredentials(url);
      expect(out, url).toBe(shown);
      expect(out, url).not.toMatch(/s3cret|pa\/ss|p@ss|ss%40|pa\?ss|tok/);
    }
    expect(withoutCredentials("write to alice@example.com")).toBe("write to alice@example.com");
  });

  it("logs - JSON off a terminal with the fields in force and secrets redacted; --log-format pretty gives one readable line", () => {
    const script = fileURLToPath(new URL("./fixtures/logLines.mjs", import.meta.url));
    const json = spawnSync(process.execPath, [script, "json"], { encoding: "utf8" });
    expect(json.status, json.stderr).toBe(0);
    const lines = json.stderr.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ level: 30, component: "worker", msg: "plain line" });
    expect(lines[0]).not.toHaveProperty("request_id");
    expect(lines[1]).toMatchObject({ level: 40, component: "gateway", request_id: "r-1", batch_id: "b-1", item_index: 2, options: { password: "[redacted]", url: "nats://h:4222" } });
    expect(json.stderr).not.toContain("hunter2");
    const pretty = spawnSync(process.execPath, [script, "pretty"], { encoding: "utf8" });
    expect(pretty.status, pretty.stderr).toBe(0);
    const [first, second] = pretty.stderr.trim().split("\n");
    expect(first).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: worker: plain line$/);
    expect(second).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: gateway: in a request .*request_id/);
    expect(pretty.stderr).not.toContain("hunter2");
    const bad = spawnSync(process.execPath, [script, "yaml"], { encoding: "utf8" });
    expect(bad.stderr).toMatch(/--log-format must be one of pretty, json, got "yaml"/);
  });
});
