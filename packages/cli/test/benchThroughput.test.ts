import { describe, expect, it } from "vitest";
import { join } from "node:path";
import { REPO_ROOT, runCli } from "./helpers/runCli.js";

describe("attr-rag bench throughput", () => {
  it("bench throughput - one JSON line per run: Asks/minute, decode calls per Ask, rows per call, latency, what reading rows cost, and the same answers at every concurrency and on both paths", async () => {
    const args = ["bench", "throughput", "--concurrency", "1,3", "--asks", "3", "--k", "2", "--max-tokens", "8", "--threads", "1", "--cells-per-sequence", "2048", "--sampling", "host,device", "--json"];
    const r = await runCli(args);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.settings).toEqual({
      asks: 3, k: 2, max_tokens: 8, threads: 1, sequences_per_ask: 9, cells_per_sequence: 2048, strategy: "speculative", embedder: "use-lite",
      variants: [{ sampling: "host", kvCache: "streams", flashAttention: "off" }, { sampling: "device", kvCache: "streams", flashAttention: "off" }],
    });
    // The two set-ups back to back at each concurrency.
    expect(report.runs.map((x: { concurrency: number; sampling: string }) => `${x.sampling} ${x.concurrency}`)).toEqual(["host 1", "device 1", "host 3", "device 3"]);
    for (const run of report.runs) {
      expect(run.asks_per_minute).toBeCloseTo((3 / run.wall_ms) * 60_000, 6);
      expect(run.decode_calls_per_ask).toBeCloseTo(run.decode_calls / 3, 9);
      expect(run.mean_rows_per_call).toBeGreaterThan(1);
      expect(run.latency.p95_ms).toBeGreaterThanOrEqual(run.latency.p50_ms);
      expect(run.context.sequences).toBe(9 * run.concurrency);
      expect(run.cpu_s).toBeLessThanOrEqual(run.cores_s * 1.05);
      // Reading rows: stories260K's 512-token vocabulary in floats on the host path, the picks on the device path.
      expect(run.sampling_why).toBe("");
      expect(run.engine.output_rows).toBeGreaterThan(0);
      expect(run.engine.bytes_to_host_per_row).toBe(run.sampling === "host" ? 4 * 512 : 24);
      expect(run.engine.decode_share).toBeGreaterThan(0);
      expect(run.engine.decode_share).toBeLessThanOrEqual(1);
      expect(run.device_ceiling.tokens_per_s).toBeGreaterThan(0);
      expect(run.engine.ceiling_fraction).toBeCloseTo(run.engine.decode_tokens_per_s / run.device_ceiling.tokens_per_s, 9);
    }
    const [one, oneDevice, three, threeDevice] = report.runs;
    expect(one.same_as_concurrency_1).toBeNull();
    expect(one.multi_job_calls).toBe(0);
    // Three Asks in flight share decode steps: fewer calls per Ask, more rows per call, the same results.
    expect(three.multi_job_calls).toBeGreaterThan(0);
    expect(three.decode_calls_per_ask).toBeLessThan(one.decode_calls_per_ask);
    expect(three.mean_rows_per_call).toBeGreaterThan(one.mean_rows_per_call);
    expect(three.same_as_concurrency_1).toBe(true);
    expect(threeDevice.same_as_concurrency_1).toBe(true);
    // The device path answers as the host path does, and the A/B says so per concurrency.
    expect([one.same_as_first_variant, oneDevice.same_as_first_variant, three.same_as_first_variant, threeDevice.same_as_first_variant]).toEqual([null, true, null, true]);
    expect(report.sampling_ab.map((x: { concurrency: number; same_answers: boolean }) => [x.concurrency, x.same_answers])).toEqual([[1, true], [3, true]]);
    expect(report.sampling_ab[0].host_us_per_row_ratio).toBeCloseTo(one.engine.host_us_per_row / oneDevice.engine.host_us_per_row, 9);
    expect(report.sampling_ab[0].bytes_per_row).toEqual({ host: 2048, device: 24 });
    expect(report.highest.decode_calls_per_ask_ratio).toBeCloseTo(three.decode_calls_per_ask / one.decode_calls_per_ask, 9);
    expect(report.run.command).toBe(`attr-rag ${args.join(" ")}`);

    const badSampling = await runCli(["bench", "throughput", "--sampling", "host,gpu"]);
    expect(badSampling.code).toBe(2);
    expect(badSampling.stderr).toMatch(/--sampling must be host or device, got "gpu"/);
    const bad = await runCli(["bench", "throughput", "--concurrency", "0,2"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--concurrency/);
    const badStrategy = await runCli(["bench", "throughput", "--strategy", "fast"]);
    expect(badStrategy.code).toBe(2);
    expect(badStrategy.stderr).toMatch(/--strategy must be naive, prefix-shared or speculative/);
    const badEmbedder = await runCli(["bench", "throughput", "--embedder", "gguf:"]);
    expect(badEmbedder.code).toBe(2);
    expect(badEmbedder.stderr).toMatch(/--embedder must be use-lite or gguf:/);
  }, 600_000);

  it("bench throughput --embedder gguf:PATH - the demo store is built and searched with that embedder", async () => {
    // use-lite vectors have 512 dimensions and stories260K's 64: a store built with one and searched with the
    // other is refused, so a finished run shows both sides used the GGUF embedder.
    const spec = `gguf:${join(REPO_ROOT, "examples/models/stories260K.gguf")}`;
    const r = await runCli(["bench", "throughput", "--embedder", spec, "--concurrency", "1", "--asks", "1", "--k", "2", "--max-tokens", "4", "--threads", "1", "--cells-per-sequence", "2048", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.settings.embedder).toBe(spec);
    expect(report.runs).toHaveLength(1);
    expect(report.runs[0].decode_calls).toBeGreaterThan(0);
  }, 600_000);
});
