import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_CORPUS, REPO_ROOT, runCli, TEST_MODEL } from "../../cli/test/helpers/runCli.js";

// Three demo questions through the real pipeline (stories260K over the demo corpus), exact against the
// approximate strategies. With a tail window covering every prompt, kv-reuse IS exact, so it must agree fully:
// that is what makes the agreement figures trustworthy when they are below 1.
// Short answers: agreement and work are measured per set, and 8 tokens give every set an answer to compare.
const ASK = ["--k", "6", "--max-tokens", "8", "--context-size", "8192", "--model", TEST_MODEL];

interface Summary {
  strategy: string;
  questions: number;
  selection_agreement: number;
  mean_kept_jaccard: number;
  mean_alpha_spearman: number | null;
  mean_abs_delta_alpha: Record<string, number>;
  tokens_evaluated: number;
  work_ratio: number;
  time_ratio: number;
  screened_fraction: number;
}

let dir: string;
let questions: string;
let store: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "attr-rag-eval-occlusion-"));
  questions = join(dir, "questions.jsonl");
  const lines = readFileSync(join(REPO_ROOT, "examples/demo-corpus/questions.jsonl"), "utf8").trim().split("\n").slice(0, 3);
  writeFileSync(questions, `${lines.join("\n")}\n`);
  store = join(dir, "store");
}, 120_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("eval occlusion", () => {
  it("eval occlusion - covering windows make kv-reuse agree fully; by default it does less work and every figure is in range", async () => {
    const covered = await runCli(["eval", "occlusion", "--questions", questions, "--corpus", DEMO_CORPUS, "--store", store, ...ASK, "--strategies", "speculative,kv-reuse", "--recompute-tail", "100000", "--json"]);
    expect(covered.code, covered.stderr).toBe(0);
    const c = JSON.parse(covered.stdout) as { reference: string; strategies: Summary[]; questions: unknown[]; failures: unknown[] };
    expect(c.reference).toBe("speculative");
    expect(c.failures).toEqual([]);
    const [exactReuse] = c.strategies;
    expect(exactReuse!.questions).toBe(3);
    expect(exactReuse!.selection_agreement).toBe(1);
    expect(exactReuse!.mean_kept_jaccard).toBe(1);
    for (const v of Object.values(exactReuse!.mean_abs_delta_alpha)) expect(v).toBeLessThan(1e-9);
    expect(Object.keys(exactReuse!.mean_abs_delta_alpha)).toHaveLength(6);

    const report = join(dir, "occlusion.html");
    const approx = await runCli(["eval", "occlusion", "--questions", questions, "--store", store, ...ASK, "--strategies", "kv-reuse,speculative,kv-mask,screen", "--screen-top-k", "2", "--report", report, "--json"]);
    expect(approx.code, approx.stderr).toBe(0);
    const a = JSON.parse(approx.stdout) as { reference: string; strategies: Summary[]; questions: { strategy: string; sets: number; screened_sets: number }[] };
    // Only screen screens, and with K = 2 it regenerates exactly two sets of each question.
    const screenRows = a.questions.filter((q) => q.strategy === "screen");
    expect(screenRows).toHaveLength(3);
    for (const q of screenRows) expect(q.screened_sets).toBe(Math.max(0, q.sets - 2));
    expect(screenRows.some((q) => q.screened_sets > 0)).toBe(true);
    expect(a.reference).toBe("speculative");
    expect(a.strategies.map((s) => s.strategy)).toEqual(["kv-reuse", "kv-mask", "screen"]);
    for (const s of a.strategies) {
      expect(s.work_ratio).toBeGreaterThan(0);
      expect(s.selection_agreement).toBeGreaterThanOrEqual(0);
      expect(s.selection_agreement).toBeLessThanOrEqual(1);
      expect(s.mean_kept_jaccard).toBeGreaterThanOrEqual(s.selection_agreement);
      expect(s.mean_alpha_spearman === null || Math.abs(s.mean_alpha_spearman) <= 1 + 1e-12, `${s.strategy}: spearman ${s.mean_alpha_spearman}`).toBe(true);
    }
    // The cache-reusing strategies do less work than exact and screen nothing; screening adds a forced pass to
    // exact regeneration of K sets (cheaper than exact only when K is small) and screens the rest.
    const [reuse, mask, screen] = a.strategies;
    for (const s of [reuse!, mask!]) {
      expect(s.work_ratio).toBeLessThan(1);
      expect(s.screened_fraction).toBe(0);
    }
    expect(screen!.screened_fraction).toBeGreaterThan(0);
    const html = readFileSync(report, "utf8");
    expect(html).toContain("kv-reuse (APPROXIMATE)");
    expect(html).toContain("screen (APPROXIMATE)");
    expect(html).toMatch(/<svg[^>]*aria-label="selection agreement against work"/);
    expect(html).not.toMatch(/<script|fetch\(/);

    const table = await runCli(["eval", "occlusion", "--questions", questions, "--store", store, ...ASK, "--strategies", "speculative,kv-reuse", "--limit", "1"]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/reference: speculative \(exact\)/);
    expect(table.stdout).toMatch(/^kv-reuse\s+1\s/m);
  }, 600_000);

  it("eval occlusion - bad strategy lists exit 2 before anything is opened", async () => {
    for (const [list, message] of [
      ["kv-reuse", /exactly one exact strategy/],
      ["naive,speculative,kv-reuse", /exactly one exact strategy/],
      ["speculative", /at least one approximate strategy/],
      ["speculative,kv-warp", /unknown kv-warp/],
      ["speculative,screen --screen-top-k 1 --screen-threshold 0.1", /--screen-top-k or --screen-threshold, not both/],
    ] as const) {
      const [strategies, ...flags] = list.split(" ");
      const r = await runCli(["eval", "occlusion", "--questions", questions, "--store", join(dir, "never"), "--model", TEST_MODEL, "--strategies", strategies!, ...flags]);
      expect(r.code, list).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});
