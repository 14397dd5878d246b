// Debian's real Prometheus server (`apt-get install -y prometheus`) for the observability tests: a scrape config
// over the given targets, its own temporary storage, a free loopback port, and PromQL through its HTTP API.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { freePort } from "@attr-rag/bench";
import { tmpdir } from "node:os";
import { join } from "node:path";

const NOT_INSTALLED = "prometheus is not installed (apt-get install -y prometheus)";

/**
 * Why Prometheus cannot run here (the tests that need it are skipped with this reason), or undefined. In CI
 * (CI=true) never: .ci/run installs it, and a missing one must fail, as a missing nats-server does.
 */
export function prometheusMissing(): string | undefined {
  if (process.env.CI === "true") return undefined;
  return prometheusInstalled() ? undefined : NOT_INSTALLED;
}

function prometheusInstalled(): boolean {
  return spawnSync("prometheus", ["--version"], { stdio: "ignore" }).error === undefined;
}

export interface PromSeries {
  metric: Record<string, string>;
  value: [number, string];
}

export class PrometheusServer implements AsyncDisposable {
  private constructor(
    readonly url: string,
    private readonly child: ChildProcess,
    private readonly dir: string,
    private readonly output: () => string,
  ) {}

  /** Scrapes every target (host:port, /metrics) each second under its job label. */
  static async start(jobs: readonly { job: string; targets: readonly string[] }[]): Promise<PrometheusServer> {
    // Said plainly here: a spawn that cannot find it only fails later, as an error event nobody awaits.
    if (!prometheusInstalled()) throw new Error(`${NOT_INSTALLED}: cannot start the Prometheus server these tests scrape with`);
    const dir = mkdtempSync(join(tmpdir(), "attr-rag-prometheus-"));
    const config = [
      "global:",
      "  scrape_interval: 1s",
      "  scrape_timeout: 1s",
      "scrape_configs:",
      ...jobs.flatMap((j) => [`  - job_name: ${JSON.stringify(j.job)}`, "    static_configs:", `      - targets: ${JSON.stringify(j.targets)}`]),
      "",
    ].join("\n");
    writeFileSync(join(dir, "prometheus.yml"), config);
    const port = await freePort();
    const child = spawn(
      "prometheus",
      [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--web.enable-lifecycle"],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    child.stdout!.on("data", (d) => (out = (out + d).slice(-20_000)));
    child.stderr!.on("data", (d) => (out = (out + d).slice(-20_000)));
    const server = new PrometheusServer(`http://127.0.0.1:${port}`, child, dir, () => out);
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}:\n${out}`);
      const ready = await fetch(`${server.url}/-/ready`).then((r) => r.ok, () => false);
      if (ready) return server;
      if (Date.now() > deadline) throw new Error(`prometheus was not ready within 30 s:\n${out}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** An instant PromQL query; a query Prometheus refuses throws with its error. */
  async query(expr: string): Promise<PromSeries[]> {
    const res = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`);
    const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: PromSeries[] } };
    if (body.status !== "success") throw new Error(`PromQL ${expr}: ${body.error ?? res.status}`);
    return body.data!.result;
  }

  /** Every target's last scrape, as Prometheus saw it. */
  async targets(): Promise<{ scrapeUrl: string; health: string; lastError: string; labels: Record<string, string> }[]> {
    const body = (await (await fetch(`${this.url}/api/v1/targets`)).json()) as { data: { activeTargets: { scrapeUrl: string; health: string; lastError: string; labels: Record<string, string> }[] } };
    return body.data.activeTargets;
  }

  get log(): string {
    return this.output();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((r) => this.child.once("exit", r));
      this.child.kill("SIGTERM");
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

