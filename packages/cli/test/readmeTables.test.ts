import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BLOCKS, loadResult, renderDocs, renderReadme, RESULTS_DIR } from "../../bench/render/readme-tables.mjs";

// The measured tables live in README.md and docs/*.md, each block in the document of its section.
const DOCS = renderDocs();
const ALL = DOCS.map((d) => d.text).join("\n");
const holder = (name: string) => DOCS.find((d) => d.text.includes(`<!-- generated:${name} -->`))!;

describe("README and docs measurements", () => {
  it("readme - every generated table is exactly what bench/results/ renders (run node packages/bench/render/readme-tables.mjs)", () => {
    // toBe on the whole text: a failure shows the differing lines.
    for (const d of DOCS) expect(d.rendered, d.file).toBe(d.text);
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
      expect(ALL, file).toMatch(new RegExp(`\\((\\.\\./)?bench/results/${file.replace(/\./g, "\\.")}\\)`));
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
      else if (file.startsWith("demo-")) data.stdout = data.stdout.map((l: string) => l.replace(/^Done in [\d.]+ s/, "Done in 99.9 s"));
      else if (file.startsWith("index-bench")) data.query.questions.bm25.c1.p50_ms += 1;
      else if (file.startsWith("search-under-ingest")) data.during_ingest.max_ms *= 1.1;
      else if (file.startsWith("embed-workers-")) data.runs[1].chunks_per_s *= 1.1;
      else if (file.startsWith("shards-bench")) data.latency[0].p50_ms += 1;
      else if (file.startsWith("telemetry-overhead-")) data.runs[0].asks_per_minute *= 1.1;
      else if (file.startsWith("telemetry-unit-cost")) data.scrape.server_cpu_ms_per_scrape *= 1.5;
      else if (file.startsWith("sentences-")) data.sentences.speculative.wall_ratio *= 1.1;
      else if (file.startsWith("peers-")) data.systems["llama-server"].wall_ms *= 1.1;
      else if (file.startsWith("soak-")) data.faults.applied -= 1;
      else throw new Error(`no nudge for ${file}: add one here`);
      return data;
    };
    for (const file of new Set(Object.values(BLOCKS).flatMap((b) => b.files))) {
      const changed = renderDocs((f) => (f === file ? nudged(f) : loadResult(f))).filter((d) => d.rendered !== d.text);
      expect(changed.length, file).toBeGreaterThan(0);
    }
    // A block rendered on its own (the form the tool writes) changes too.
    const doc = holder("throughput-bench");
    const nudgedRun = renderReadme(doc.text, (f) => (f.startsWith("throughput-") ? nudged(f) : loadResult(f)), { prefix: "../", every: false });
    expect(nudgedRun).not.toBe(doc.text);
  });
});
