import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TEST_MODEL } from "./helpers/runCli.js";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const STORIES = TEST_MODEL;

function run(args: string[]) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8", timeout: 240_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("attr-rag bench occlusion", () => {
  it("cli bench - writes the JSON report: every strategy compared with naive on the demo corpus", () => {
    const r = run(["bench", "occlusion", "--model", STORIES, "--sets", "3", "--set-tokens", "40", "--max-tokens", "16", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(Object.keys(report)).toEqual(["model", "n_sets", "prompt_tokens", "max_tokens", "single", "strategies", "max_divergence_margin"]);
    expect(report.n_sets).toBe(3);
    expect(report.max_tokens).toBe(16);
    expect(report.prompt_tokens).toBeGreaterThan(3 * 30);
    expect(Object.keys(report.strategies)).toEqual(["naive", "prefix-shared", "speculative"]);
    expect(report.strategies.naive.sequences_identical).toBe(4);
    for (const name of ["prefix-shared", "speculative"]) {
      const s = report.strategies[name];
      expect(s.sequences_total).toBe(4);
      expect(s.tokens_reused).toBeGreaterThan(0);
      expect(s.tokens_evaluated).toBeLessThan(report.strategies.naive.tokens_evaluated);
      for (const d of s.first_divergences) expect(d.naive_margin).toBeLessThanOrEqual(0.1);
    }
    expect(report.max_divergence_margin).toBeLessThanOrEqual(0.1);
    expect(report.single.tokens_evaluated).toBeGreaterThan(report.prompt_tokens);
    expect(r.stderr).toMatch(/bench occlusion: \d+\/13/);
  });

  it("cli bench - bad options and a missing model are clear errors", () => {
    const strategies = run(["bench", "occlusion", "--model", STORIES, "--strategies", "naive,warp"]);
    expect(strategies.code).toBe(2);
    expect(strategies.stderr).toMatch(/unknown warp/);
    const sets = run(["bench", "occlusion", "--model", STORIES, "--sets", "0"]);
    expect(sets.code).toBe(2);
    expect(sets.stderr).toMatch(/--sets must be a positive integer/);
    const missing = run(["bench", "occlusion", "--model", "/nonexistent/model.gguf", "--sets", "2"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read the model file/);
    expect(run(["bench", "occlusion"]).stderr).toMatch(/--model/);
  });
});
