import { describe, expect, it } from "vitest";
import { natsServerMissing } from "@attr-rag/nats";
import { cpuBetween, cpuSeconds } from "@attr-rag/bench";
import { runCli } from "./helpers/runCli.js";

const missing = natsServerMissing();

describe("attr-rag bench batch", () => {
  it("bench batch - cpuSeconds reads a live process's CPU time from /proc and grows with work; a gone process reads undefined", () => {
    const before = cpuSeconds(process.pid)!;
    expect(before).toBeGreaterThan(0);
    // Work until /proc shows 0.15 s more CPU (polled: on a busy machine a fixed wall time may get less of it).
    const deadline = performance.now() + 20_000;
    let x = 0;
    let after = before;
    while (after - before < 0.15 && performance.now() < deadline) {
      for (let i = 0; i < 1_000_000; i++) x += Math.sqrt(x + 1);
      after = cpuSeconds(process.pid)!;
    }
    expect(x).toBeGreaterThan(0);
    expect(after - before).toBeGreaterThanOrEqual(0.15);
    expect(cpuSeconds(2 ** 22 + 12345)).toBeUndefined();
    expect(cpuSeconds(undefined)).toBeUndefined();
    expect(cpuBetween({ a: 1, b: 2, gone: 3 }, { a: 1.5, b: 4, gone: undefined, fresh: 1 })).toEqual({ a: 0.5, b: 2 });
  });

  it.skipIf(missing !== undefined)(`bench batch - one JSON line: embedded one by one, a batch per worker count with each process's CPU, interactive latency and a large batch${missing ? ` (skipped: ${missing})` : ""}`, async () => {
    const args = ["bench", "batch", "--workers", "1,2", "--items", "2", "--interactive", "1", "--large", "50", "--k", "2", "--max-tokens", "4", "--context-size", "8192", "--json"];
    const r = await runCli(args);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.settings).toEqual({ k: 2, max_tokens: 4, threads_per_worker: 1, context_size: 8192, items: 2, interactive: 1, large: 50 });
    expect(report.embedded_one_by_one.items).toBe(2);
    expect(report.batches.map((b: { workers: number }) => b.workers)).toEqual([1, 2]);
    for (const b of report.batches) {
      expect(b.succeeded).toBe(2);
      expect(b.items_per_minute).toBeCloseTo((2 / b.wall_ms) * 60_000, 6);
      // Each item is one occlusion job and at most one generation job and one likelihood job (the final
      // answer's sentence-level attribution).
      const jobs = b.jobs_per_worker.reduce((s: number, n: number) => s + n, 0);
      expect(jobs).toBeGreaterThanOrEqual(2);
      expect(jobs).toBeLessThanOrEqual(6);
      // Every process was measured, and the workers did work; nobody used more than the cores offered.
      expect(Object.keys(b.cpu_s).sort()).toEqual(["gateway", "index", "nats-server", "selector", ...Array.from({ length: b.workers }, (_, i) => `worker-${i + 1}`)].sort());
      expect(b.cpu_s["worker-1"]).toBeGreaterThan(0);
      const used = Object.values(b.cpu_s as Record<string, number>).reduce((s, n) => s + n, 0);
      expect(used).toBeLessThanOrEqual(b.cores_s * 1.05);
    }
    expect(report.speedup["2"]).toBeCloseTo(report.batches[1].items_per_minute / report.batches[0].items_per_minute, 9);
    expect(report.interactive.ratio).toBeCloseTo(report.interactive.during_batch.median_ms / report.interactive.idle.median_ms, 9);
    expect(report.large).toMatchObject({ workers: 2, items: 50 });
    expect(report.large.results_read.results).toBeLessThanOrEqual(50);
    expect(report.run.command).toBe(`attr-rag ${args.join(" ")}`);
  }, 900_000);
});
