import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { SystemReport } from "@attr-rag/bench";
import { TEST_MODEL } from "./helpers/runCli.js";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const PEERS = fileURLToPath(new URL("../../../bench/peers/node_modules/node-llama-cpp/package.json", import.meta.url));

function run(args: string[]) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8", timeout: 240_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}


describe("attr-rag bench peers", () => {
  it("cli bench - runs node-llama-cpp beside our strategies on the same token ids, compares every answer with naive's, and skips a peer that is not built with the command that builds it", () => {
    expect(existsSync(PEERS), "node-llama-cpp is missing: npm install --prefix bench/peers --omit=optional --no-save (npm test does it)").toBe(true);
    const r = run([
      ...["bench", "peers", "--model", TEST_MODEL, "--sets", "3", "--set-tokens", "40", "--max-tokens", "16", "--threads", "1"],
      ...["--strategies", "naive,prefix-shared,kv-reuse", "--peers", "node-llama-cpp,node-llama-cpp-serial,llama-server", "--llama-server", "/nonexistent/llama-server", "--runs", "2", "--json"],
    ]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as {
      systems: Record<string, SystemReport>;
      skipped: Record<string, string>;
      ceiling: { tokens_per_s: number; batch_tokens: number };
      prompt_tokens: number;
      shape: { body_macs_per_token: number; vocab_row_macs: number };
      fastest_exact: string;
      faster_peer: string;
      speedup: number;
      macs_ratio: number;
      max_divergence_margin: number;
      run: { command: string; backend?: { name: string } };
    };
    expect(Object.keys(report.systems)).toEqual(["naive", "prefix-shared", "kv-reuse", "node-llama-cpp", "node-llama-cpp-serial"]);
    const { naive, "prefix-shared": shared, "kv-reuse": reuse, "node-llama-cpp": nlc, "node-llama-cpp-serial": serial } = report.systems as Record<string, SystemReport>;
    // The peer that is not built is named, with how to build it; the others ran.
    expect(report.skipped["llama-server"]).toMatch(/build-llama-server\.sh/);
    expect(report.run.backend?.name).toBe("cpu");
    // Every system answered all n + 1 prompts, the same in both rounds; the wall is the rounds' median.
    for (const s of Object.values(report.systems)) {
      expect(s.answers).toBe(4);
      expect(s.answers_same_every_run).toBe(true);
      expect(s.wall_runs_ms).toHaveLength(2);
      expect(s.wall_ms).toBeCloseTo((s.wall_runs_ms[0]! + s.wall_runs_ms[1]!) / 2, 9);
      expect(s.peak_rss_mib).toBeGreaterThan(10);
      expect(s.wall_ms).toBeGreaterThan(0);
      expect(s.setup.length).toBeGreaterThan(20);
    }
    // node-llama-cpp, greedy on the very token ids our naive strategy used: the same answers (a difference only at a near-tie).
    for (const s of [nlc!, serial!, shared!]) {
      expect(s.identical_to_naive! + s.first_divergences!.length).toBe(4);
      for (const d of s.first_divergences!) expect(d.naive_margin).toBeLessThanOrEqual(0.1);
    }
    expect(naive!.identical_to_naive).toBeNull();
    // Tokens through llama_decode: all at once, each prompt is prefilled in full, as naive does; one at a time,
    // node-llama-cpp keeps what a prompt shares with the one before; prefix sharing does less still than naive.
    expect(nlc!.tokens_evaluated).toBe(naive!.tokens_evaluated);
    expect(serial!.tokens_evaluated).toBeLessThan(naive!.tokens_evaluated);
    expect(shared!.tokens_evaluated).toBeLessThan(naive!.tokens_evaluated);
    expect(shared!.decode_calls!).toBeLessThan(naive!.decode_calls!);
    expect(nlc!.decode_calls).toBeNull(); // node-llama-cpp does not expose them
    // kv-reuse is labelled approximate and carries its fidelity; exact systems do not.
    expect(reuse!.approximate).toBe(true);
    expect(reuse!.fidelity!.occluded_identical).toBeGreaterThanOrEqual(0);
    expect(shared!.approximate).toBeUndefined();
    // Multiply-adds follow tokens and output rows; the ceiling was measured in this run.
    expect(naive!.macs).toBe(naive!.tokens_evaluated * report.shape.body_macs_per_token + naive!.output_rows * report.shape.vocab_row_macs);
    expect(report.ceiling.tokens_per_s).toBeGreaterThan(0);
    expect(naive!.ceiling_fraction).toBeCloseTo(naive!.tokens_per_s / report.ceiling.tokens_per_s, 6);
    // The headline ratio is the faster peer's wall over the fastest exact strategy's (kv-reuse never counts).
    const exact = ["naive", "prefix-shared"].reduce((a, b) => (report.systems[a]!.wall_ms <= report.systems[b]!.wall_ms ? a : b));
    const peer = ["node-llama-cpp", "node-llama-cpp-serial"].reduce((a, b) => (report.systems[a]!.wall_ms <= report.systems[b]!.wall_ms ? a : b));
    expect([report.fastest_exact, report.faster_peer]).toEqual([exact, peer]);
    expect(report.speedup).toBeCloseTo(report.systems[peer]!.wall_ms / report.systems[exact]!.wall_ms, 9);
  });

  it("cli bench - refuses an unknown peer, a repeated one, and an empty run before loading anything", () => {
    const unknown = run(["bench", "peers", "--model", TEST_MODEL, "--peers", "vllm"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--peers.*vllm/s);
    const twice = run(["bench", "peers", "--model", TEST_MODEL, "--strategies", "naive,naive"]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/twice/);
    const none = run(["bench", "peers", "--model", TEST_MODEL, "--strategies", "", "--peers", ""]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/nothing to run/);
  });
});
