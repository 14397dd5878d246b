// The stand-alone benchmark scripts, run as a reader runs them (node packages/bench/scripts/X.mjs from the
// repository root, after `npm run build`), on the smallest settings: each must print its JSON report, with
// the work done and no error. Two of them once failed every ingest (a request without wait_for_replicas),
// and one needed an earlier demo run's store; nothing else ran them.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { natsServerMissing } from "@attr-rag/nats";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const missing = natsServerMissing();

function script(name: string, args: readonly string[]): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [`packages/bench/scripts/${name}.mjs`, ...args], { cwd: ROOT, maxBuffer: 16 << 20, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${name} failed: ${err.message}\n${stderr.slice(-3000)}`));
      resolve(JSON.parse(stdout) as Record<string, any>);
    });
  });
}

describe("the bench scripts", () => {
  it("bench scripts - index-bench: a small store ingested and every query kind timed", async () => {
    const r = await script("index-bench", ["--chunks", "300", "--queries", "5", "--exhaustive-queries", "2", "--use-lite-sample", "2"]);
    expect(r.chunks).toBeGreaterThanOrEqual(300);
    for (const mode of ["bm25", "dense", "hybrid"]) expect(r.query.words[mode].c1.queries).toBe(5);
    expect(r.run.command).toBe("node packages/bench/scripts/index-bench.mjs --chunks 300 --queries 5 --exhaustive-queries 2 --use-lite-sample 2");
  });

  it("bench scripts - search-under-ingest: every document indexed through the gateway and no search failed", async () => {
    const r = await script("search-under-ingest", ["--docs", "20", "--clients", "2", "--seed-docs", "5"]);
    expect(r.ingest).toMatchObject({ documents: 20, indexed: 20, failed: 0 });
    expect(r.idle.searches).toBeGreaterThan(0);
    expect(r.idle.errors + r.during_ingest.errors).toBe(0);
  });

  it.skipIf(missing !== undefined)(`bench scripts - embed-workers-bench: a local cluster embeds every document on its worker${missing ? ` (skipped: ${missing})` : ""}`, async () => {
    const r = await script("embed-workers-bench", ["--docs", "6", "--workers", "1"]);
    expect(r.runs).toHaveLength(1);
    expect(r.runs[0]).toMatchObject({ workers: 1, documents: 6 });
    expect(r.runs[0].chunks).toBeGreaterThanOrEqual(6);
    expect(r.runs[0].jobs_per_worker[0]).toBeGreaterThan(0);
  });

  it("bench scripts - telemetry-unit-cost: scrapes a server it starts on a store of its own, and exports every span", async () => {
    const r = await script("telemetry-unit-cost", []);
    expect(r.scrape.scrapes).toBe(300);
    expect(r.scrape.bytes_per_scrape).toBeGreaterThan(1000);
    expect(r.spans.received_at_sink).toBeGreaterThanOrEqual(r.spans.spans);
  });
});
