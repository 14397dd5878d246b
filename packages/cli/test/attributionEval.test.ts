import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { evaluateExample, exhaustiveTopK, RELATIONSHIP_KINDS, relationshipSets, topK } from "@attr-rag/eval";
import { REPO_ROOT, runCli, TEST_MODEL } from "./helpers/runCli.js";

describe("attr-rag eval attribution", () => {
  it("eval attribution - relationship sets: two positives related as their kind says, negatives that do not answer, reproducible by seed", () => {
    for (const kind of RELATIONSHIP_KINDS) {
      const examples = relationshipSets(kind, 20, 7, 3);
      expect(relationshipSets(kind, 20, 7, 3)).toEqual(examples);
      expect(relationshipSets(kind, 20, 8, 3)).not.toEqual(examples);
      expect(new Set(examples.map((e) => e.question)).size).toBe(20);
      for (const e of examples) {
        expect(e.kind).toBe(kind);
        expect(e.passages.map((p) => p.id).sort()).toEqual(["A", "B", "N1", "N2", "N3"]);
        const [a, b] = ["A", "B"].map((id) => e.passages.find((p) => p.id === id)!.text);
        const negatives = e.passages.filter((p) => p.role === "negative").map((p) => p.text);
        if (kind === "redundancy") {
          const phrase = /"([^"]+)"/.exec(e.answer)![1]!;
          expect(a).toContain(phrase);
          expect(b).toContain(phrase);
          negatives.forEach((n) => expect(n).not.toContain(phrase));
        } else if (kind === "complementarity") {
          const [first, second] = e.answer.replace(/\.$/, "").split(" and it can ").map((s) => s.replace(/^The .* can /, ""));
          expect(a).toContain(first!);
          expect(b).toContain(second!);
          expect(a).not.toContain(second!);
        } else {
          // Multi-hop: only A ties the planet to the person, only B ties the person to the salary.
          const planet = /planet (\w+)\?/.exec(e.question)![1]!;
          const salary = /about (\d+) million/.exec(e.answer)![1]!;
          expect(a).toContain(planet);
          expect(b).not.toContain(planet);
          expect(b).toContain(`${salary} million`);
          expect(a).not.toContain(salary);
        }
      }
    }
    expect(relationshipSets("mixed", 6, 1).map((e) => e.kind)).toEqual([...RELATIONSHIP_KINDS, ...RELATIONSHIP_KINDS]);
    expect(() => relationshipSets("synergy", 1, 0, 5)).toThrow(/negatives must be 1..4/);
    // The script writes the same examples as JSON lines.
    const lines = execFileSync(process.execPath, [join(REPO_ROOT, "packages/eval/scripts/relationship-sets.mjs"), "--kind", "synergy", "--sets", "4", "--seed", "7", "--negatives", "3"], { encoding: "utf8" });
    expect(lines.trim().split("\n").map((l) => JSON.parse(l))).toEqual(relationshipSets("synergy", 4, 7, 3));
  });

  it("eval attribution - RQ1/RQ2 on a constructed game: removing one of a synergetic pair removes all it adds, so the exhaustive top 2 is one of the pair and the single set", async () => {
    // 4 sets: 0 and 2 are synergetic (both needed: +6), 1 adds 1 alone, 3 nothing.
    const n = 4;
    const values = Array.from({ length: 1 << n }, (_, m) => (m & 1 && m & 4 ? 6 : 0) + (m & 2 ? 1 : 0) - 10);
    expect(exhaustiveTopK(n, values, 1)).toEqual([0]);
    expect(exhaustiveTopK(n, values, 2)).toEqual([0, 1]);
    expect(topK([0.5, 3, 3, -1], 2)).toEqual([1, 2]);
    const out = await evaluateExample(n, values, [0, 2], { samples: 64, seed: 1, kMax: 3 });
    expect(out.shapley!.scores.map((x) => Math.round(x * 1e9) / 1e9)).toEqual([3, 1, 3, 0]);
    expect(out.shapley!.spearman).toBeCloseTo(1, 12);
    expect(out.shapley!.positivesTop2).toBe(true);
    expect(out.shapley!.utilityCalls).toBe(16);
    // Leave-one-out ranks the pair (6 each) over the single (1), as Shapley does: both miss half the top 2.
    expect(out["leave-one-out"]!.utilityCalls).toBe(5);
    expect(out["leave-one-out"]!.precisionAt).toEqual([1, 0.5, 1]);
    expect(out.shapley!.precisionAt).toEqual([1, 0.5, 1]);
    for (const m of Object.values(out)) for (const p of m.precisionAt) expect(p).toBeGreaterThanOrEqual(0);
  });

  it("eval attribution - runs every method on a real model's utilities and reports RQ1, RQ2 and calls as one JSON line", async () => {
    const r = await runCli(["eval", "attribution", "--sets", "3", "--negatives", "2", "--samples", "16", "--model", TEST_MODEL, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(Object.keys(report)).toEqual(["bench", "model", "kind", "examples", "sets_per_example", "seed", "samples", "methods", "engine", "run"]);
    expect(Object.keys(report.methods)).toEqual(["shapley", "leave-one-out", "kernel-shap", "tmc-shapley", "beta-shapley", "contextcite"]);
    expect(report.methods.shapley).toMatchObject({ spearman: 1, kendall: 1, utility_calls: 16 });
    expect(report.methods["leave-one-out"].utility_calls).toBe(5);
    expect(report.engine.coalitions_scored).toBe(3 * 16);
    for (const m of Object.values(report.methods) as { precision_at: Record<string, number>; kendall: number | null }[]) {
      expect(Object.keys(m.precision_at)).toEqual(["1", "2", "3"]);
      for (const p of Object.values(m.precision_at)) expect(p >= 0 && p <= 1).toBe(true);
      expect(m.kendall === null || Math.abs(m.kendall) <= 1, `kendall ${m.kendall}`).toBe(true);
    }
    const bad = await runCli(["eval", "attribution", "--kind", "bogus"]);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/--kind must be one of redundancy, complementarity, synergy, mixed/)]);
    const zero = await runCli(["eval", "attribution", "--samples", "0"]);
    expect(zero.code).toBe(2);
    expect(zero.stderr).toMatch(/--samples/);
  });
});

describe("attr-rag bench attribution", () => {
  it("bench attribution - Kernel SHAP's coalitions batched and one by one: same utilities, fewer tokens batched, the bound stated", async () => {
    const r = await runCli(["bench", "attribution", "--model", TEST_MODEL, "--sets", "4", "--set-tokens", "30", "--samples", "8", "--max-tokens", "8", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ model: TEST_MODEL, n_sets: 4, samples: 8 });
    expect(report.max_abs_diff).toBeLessThan(1e-3);
    expect(report.batched.tokens_evaluated).toBeLessThan(report.one_by_one.tokens_evaluated);
    expect(report.batched.tokens_reused).toBeGreaterThan(0);
    expect(report.multiply_add_bound).toBeGreaterThan(1);
    expect(report.coalitions).toBeGreaterThanOrEqual(4);
    expect(report.run.command).toContain("bench attribution");
    const bad = await runCli(["bench", "attribution", "--model", TEST_MODEL, "--samples", "70000"]);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/--samples must be at most 65536/)]);
  });
});
