import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BLOCKS, loadResult, renderReadme, REPO_ROOT, RESULTS_DIR } from "../../../tools/bench/readme-tables.mjs";

const README = readFileSync(join(REPO_ROOT, "README.md"), "utf8");

describe("README measurements", () => {
  it("readme - every generated table is exactly what bench/results/ renders (run tools/bench/readme-tables.mjs)", () => {
    // toBe on the whole text: a failure shows the differing lines.
    expect(renderReadme(README)).toBe(README);
  });

  it("readme - every result file is used, and each records the command, commit and machine that made it", () => {
    // A file may feed several blocks (e.g. a speed table and the fidelity table).
    const used = [...new Set(Object.values(BLOCKS).flatMap((b) => b.files))];
    expect(readdirSync(RESULTS_DIR).filter((f) => f.endsWith(".json")).sort()).toEqual([...used].sort());
    for (const file of used) {
      const run = loadResult(file).run;
      expect(run.command, file).toMatch(/^(attr-rag|node tools\/bench\/)/);
      expect(run.commit, file).toMatch(/^[0-9a-f]{40}$/);
      expect(run.machine.cores, file).toBeGreaterThan(0);
      expect(README, file).toContain(`(bench/results/${file})`);
    }
  });

  it("readme - a number changed in a result file no longer matches the README", () => {
    const nudged = (file: string) => {
      const data = loadResult(file);
      if (file.startsWith("occlusion-")) data.strategies["prefix-shared"].wall_ms *= 1.1;
      else if (file.startsWith("retrieval-tune-")) data.tune.grid[0]["ndcg@10"] += 0.01;
      else if (file.startsWith("retrieval-")) data.modes.hybrid["ndcg@10"] += 0.01;
      else if (file.startsWith("cluster-")) data.throughput[1].wall_ms *= 1.1;
      else if (file.startsWith("batch-")) data.batches[1].wall_ms *= 1.1;
      else if (file.startsWith("eval-attribution-")) data.methods["kernel-shap"].precision_at["2"] += 0.01;
      else if (file.startsWith("attribution-bench-")) data.batched.wall_ms *= 1.1;
      else if (file.startsWith("throughput-")) data.runs[1].asks_per_minute *= 1.1;
      else data.query.bm25.c1.p50_ms += 1;
      return data;
    };
    for (const file of Object.values(BLOCKS).flatMap((b) => b.files)) {
      expect(renderReadme(README, (f) => (f === file ? nudged(f) : loadResult(f))), file).not.toBe(README);
    }
  });
});
