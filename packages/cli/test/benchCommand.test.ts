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
  it("cli bench - writes the JSON report: every other strategy compared with naive on the demo corpus, and how it ran", () => {
    const r = run(["bench", "occlusion", "--model", STORIES, "--sets", "3", "--set-tokens", "40", "--max-tokens", "16", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(Object.keys(report)).toEqual(["model", "model_parameters", "n_sets", "prompt_tokens", "max_tokens", "single", "strategies", "max_divergence_margin", "sampling", "sampling_why", "device_ceiling", "run"]);
    // Rows were picked on the device (the default), 24 bytes each; the ceiling was measured in this run.
    expect(report).toMatchObject({ sampling: "device", sampling_why: "" });
    expect(report.device_ceiling.tokens_per_s).toBeGreaterThan(0);
    for (const s of Object.values(report.strategies) as { engine: { output_rows: number; bytes_to_host_per_row: number; decode_share: number } }[]) {
      expect(s.engine.output_rows).toBeGreaterThan(0);
      expect(s.engine.bytes_to_host_per_row).toBe(24);
      expect(s.engine.decode_share).toBeGreaterThan(0);
    }
    expect(report.model).toBe(STORIES); // as given on the command line
    expect(report.model_parameters).toBeGreaterThan(200_000);
    expect(report.n_sets).toBe(3);
    expect(report.max_tokens).toBe(16);
    expect(report.prompt_tokens).toBeGreaterThan(3 * 30);
    expect(Object.keys(report.strategies)).toEqual(["naive", "prefix-shared", "speculative", "kv-reuse", "kv-mask"]);
    // naive is the reference, not a strategy compared with itself.
    expect(report.strategies.naive).toMatchObject({ sequences_identical: null, first_divergences: null, sequences_total: 4 });
    for (const name of ["prefix-shared", "speculative"]) {
      const s = report.strategies[name];
      expect(s.sequences_total).toBe(4);
      expect(s.sequences_identical + s.first_divergences.length).toBe(4);
      expect(s.tokens_reused).toBeGreaterThan(0);
      expect(s.tokens_evaluated).toBeLessThan(report.strategies.naive.tokens_evaluated);
      for (const d of s.first_divergences) expect(d.naive_margin).toBeLessThanOrEqual(0.1);
    }
    // The approximate strategies: labelled, less work than exact sharing, and measured against naive.
    for (const name of ["kv-reuse", "kv-mask"]) {
      const s = report.strategies[name];
      expect(s).toMatchObject({ approximate: true, sequences_total: 4 });
      expect(s.tail_tokens).toBeGreaterThan(0);
      expect(s.tokens_evaluated).toBeLessThan(report.strategies["prefix-shared"].tokens_evaluated);
      const f = s.fidelity;
      expect(f.reference).toBe("naive");
      expect(Object.keys(f.mean_abs_delta_alpha)).toEqual(["jaccard", "rouge1", "rouge2", "rougeL", "rougeLsum"]);
      for (const x of [f.occluded_identical, f.top1_agreement, f.kept_jaccard]) expect(x >= 0 && x <= 1).toBe(true);
      expect(f.mean_kl).toBeGreaterThanOrEqual(0);
    }
    expect(report.strategies["prefix-shared"].approximate).toBeUndefined();
    expect(report.max_divergence_margin).toBeGreaterThanOrEqual(0);
    expect(report.max_divergence_margin).toBeLessThanOrEqual(0.1);
    expect(report.single.tokens_evaluated).toBeGreaterThan(report.prompt_tokens);
    expect(r.stderr).toMatch(/bench occlusion: \d+\/23/);
    expect(report.run.command).toBe(`attr-rag bench occlusion --model ${STORIES} --sets 3 --set-tokens 40 --max-tokens 16 --json`);
    expect(report.run.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(typeof report.run.dirty).toBe("boolean");
    expect(report.run.machine.cores).toBeGreaterThan(0);
    expect(report.run.machine.devices.some((d: string) => d.startsWith("cpu:"))).toBe(true);
  });

  it("cli bench - an approximate strategy whose recompute window covers the prompt measures as exact", () => {
    const r = run(["bench", "occlusion", "--model", STORIES, "--sets", "3", "--set-tokens", "40", "--max-tokens", "16", "--strategies", "naive,kv-reuse", "--recompute", "100000", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(Object.keys(report.strategies)).toEqual(["naive", "kv-reuse+100000"]);
    const f = report.strategies["kv-reuse+100000"].fidelity;
    expect(f.top1_agreement).toBe(1);
    expect(f.mean_kl).toBeLessThan(1e-4);
    expect(f.occluded_identical).toBe(1);
    expect(f.selection_identical).toBe(true);
    for (const v of Object.values(f.mean_abs_delta_alpha) as number[]) expect(v).toBe(0);
    // screen: the regenerated sets plus the screened ones are all the sets; no KL for answers it never decodes.
    const screen = run(["bench", "occlusion", "--model", STORIES, "--sets", "4", "--set-tokens", "30", "--max-tokens", "12", "--strategies", "naive,screen", "--json"]);
    expect(screen.code, screen.stderr).toBe(0);
    const sr = JSON.parse(screen.stdout).strategies.screen;
    expect(sr).toMatchObject({ approximate: true, regenerated: 2, screened: 2, sequences_total: 5 });
    const one = run(["bench", "occlusion", "--model", STORIES, "--sets", "4", "--set-tokens", "30", "--max-tokens", "12", "--strategies", "screen", "--screen-top-k", "1", "--json"]);
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout).strategies.screen).toMatchObject({ regenerated: 1, screened: 3 });
    const stray = run(["bench", "occlusion", "--model", STORIES, "--screen-top-k", "1"]);
    expect(stray.code).not.toBe(0);
    expect(stray.stderr).toMatch(/--screen-top-k applies to the screen strategy/);
    expect(sr.fidelity).toMatchObject({ reference: "naive", mean_kl: null, top1_agreement: null });
    const bad = run(["bench", "occlusion", "--model", STORIES, "--recompute", "4,x"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--recompute must be an integer ≥ 0/);
    const layout = run(["bench", "occlusion", "--model", STORIES, "--kv", "unified", "--strategies", "naive,kv-reuse"]);
    expect(layout.code).toBe(2);
    expect(layout.stderr).toMatch(/--kv unified cannot run kv-reuse/);
  });

  it("cli bench - without naive nothing is compared: the agreement fields are null, not a perfect score", () => {
    const r = run(["bench", "occlusion", "--model", STORIES, "--sets", "2", "--set-tokens", "30", "--max-tokens", "8", "--strategies", "prefix-shared", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(Object.keys(report.strategies)).toEqual(["prefix-shared"]);
    expect(report.strategies["prefix-shared"]).toMatchObject({ sequences_identical: null, first_divergences: null, sequences_total: 3 });
    expect(report.max_divergence_margin).toBeNull();
    const text = run(["bench", "occlusion", "--model", STORIES, "--sets", "2", "--set-tokens", "30", "--max-tokens", "8", "--strategies", "speculative"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/identical to naive: not compared/);
    expect(text.stdout).toMatch(/answers not compared: add naive to --strategies/);
    // naive with only an approximate strategy: naive ran, so the last line must not ask for it.
    const alone = run(["bench", "occlusion", "--model", STORIES, "--sets", "2", "--set-tokens", "30", "--max-tokens", "8", "--strategies", "naive,kv-reuse"]);
    expect(alone.code, alone.stderr).toBe(0);
    expect(alone.stdout).not.toMatch(/add naive to --strategies/);
    expect(alone.stdout).toMatch(/no exact strategy but naive ran: add prefix-shared or speculative/);
  });

  it("cli bench - bad options and a missing model are clear errors", () => {
    const strategies = run(["bench", "occlusion", "--model", STORIES, "--strategies", "naive,warp"]);
    expect(strategies.code).toBe(2);
    expect(strategies.stderr).toMatch(/unknown warp/);
    const sets = run(["bench", "occlusion", "--model", STORIES, "--sets", "0"]);
    expect(sets.code).toBe(2);
    expect(sets.stderr).toMatch(/--sets must be a positive integer/);
    const missing = run(["bench", "occlusion", "--model", "/nonexistent/model.gguf", "--sets", "2"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/cannot read the model file \/nonexistent\/model\.gguf: it does not exist/);
    expect(run(["bench", "occlusion"]).stderr).toMatch(/--model/);
    const sampling = run(["bench", "occlusion", "--model", STORIES, "--sampling", "gpu"]);
    expect(sampling.code).toBe(2);
    expect(sampling.stderr).toMatch(/--sampling must be device or host/);
  });
});
