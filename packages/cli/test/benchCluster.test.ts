import { describe, expect, it } from "vitest";
import { natsServerMissing } from "@attr-rag/nats";
import { runCli } from "./helpers/runCli.js";

const missing = natsServerMissing();

describe("attr-rag bench cluster", () => {
  it.skipIf(missing !== undefined)(`cli bench cluster - measures embedded vs distributed latency and asks/minute per worker count on real clusters, as one JSON line${missing ? ` (skipped: ${missing})` : ""}`, async () => {
    const args = ["bench", "cluster", "--workers", "1,2", "--asks", "3", "--repeats", "1", "--k", "4", "--max-tokens", "8", "--context-size", "8192", "--json"];
    const r = await runCli(args);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(Object.keys(report)).toEqual(["bench", "model", "settings", "latency", "throughput", "speedup", "goals", "run"]);
    expect(report.settings).toEqual({ k: 4, max_tokens: 8, threads_per_worker: 1, context_size: 8192, asks: 3, repeats: 1 });
    const l = report.latency;
    for (const s of [l.embedded, l.distributed_1_worker]) {
      expect(s.runs_ms).toHaveLength(1);
      expect(s.median_ms).toBe(s.runs_ms[0]);
      expect(s.median_ms).toBeGreaterThan(0);
    }
    expect(l.overhead_ms).toBeCloseTo(l.distributed_1_worker.median_ms - l.embedded.median_ms, 6);
    expect(l.overhead_fraction).toBeCloseTo(l.overhead_ms / l.embedded.median_ms, 9);
    // Same engine settings on both sides: the distributed mode must answer exactly as the embedded one.
    expect(l.same_final_answer).toBe(true);
    expect(report.throughput.map((t: { workers: number }) => t.workers)).toEqual([1, 2]);
    for (const t of report.throughput) {
      expect(t.asks).toBe(3);
      expect(t.asks_per_minute).toBeCloseTo((3 / t.wall_ms) * 60_000, 6);
      expect(t.jobs_per_worker).toHaveLength(t.workers);
      // Each Ask is one occlusion job and at most one generation job and one likelihood job (the final
      // answer's sentence-level attribution), each done by exactly one worker.
      const jobs = t.jobs_per_worker.reduce((a: number, b: number) => a + b, 0);
      expect(jobs).toBeGreaterThanOrEqual(3);
      expect(jobs).toBeLessThanOrEqual(9);
    }
    expect(report.speedup["1"]).toBe(1);
    expect(report.speedup["2"]).toBeCloseTo(report.throughput[1].asks_per_minute / report.throughput[0].asks_per_minute, 9);
    expect(report.run.command).toBe(`attr-rag ${args.join(" ")}`);
    expect(r.stderr).toMatch(/bench cluster: cluster with 2 worker\(s\): 3 asks at once/);
  }, 600_000);

  it("cli bench cluster - bad options are refused naming the option", async () => {
    const r = await runCli(["bench", "cluster", "--workers", "1,0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--workers must be a positive integer, got "0"/);
    const asks = await runCli(["bench", "cluster", "--asks", "many"]);
    expect(asks.stderr).toMatch(/--asks must be a positive integer/);
  });
});
