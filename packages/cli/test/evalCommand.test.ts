import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChunkStore, DEFAULT_FUSION, fuseHits, hybridCandidates, type SearchHit } from "@attr-rag/index";
import { parseKList, scoreRankings } from "@attr-rag/eval";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));

function run(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8", timeout: 120_000, env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// A tiny benchmark whose BM25 rankings can be worked out by hand (FTS5 unicode61: no stemming, no stop words).
const FILLER = "The laboratory notebook records the date, the operator and the room temperature for every run. ";
const ZINC = "Zinc zinc zinc plating: the zinc anode dissolves while zinc deposits on the steel cathode. ";
const DOCS = [
  { id: "d1", title: "Brine", text: "Sodium chloride dissolves in water to form brine; evaporating the brine gives back the salt crystals." },
  // Three chunks; the first two are full of "zinc", so at chunk level they outrank d3 for a zinc query.
  { id: "d2", title: "Galvanizing", text: [ZINC + FILLER.repeat(6), ZINC + FILLER.repeat(6), FILLER.repeat(7)].join("\n\n") },
  { id: "d3", title: "Batteries", text: "A simple cell pairs a zinc electrode with a copper electrode in an electrolyte solution." },
  { id: "d4", title: "Titration", text: "Add the indicator phenolphthalein, then titrate the acid with sodium hydroxide until a faint pink colour persists." },
  { id: "d5", title: "Distillation", text: "Fractional distillation separates ethanol from water using a fractionating column packed with glass beads." },
  { id: "d6", title: "Boiling points", text: "Ethanol boils at 78 degrees Celsius, water at 100 degrees, so the vapour is richer in the more volatile liquid." },
];
const QUESTIONS = [
  // brine/sodium/chloride only in d1 → d1 first: R@1 = 1, RR = 1, nDCG = 1.
  { id: "q1", question: "How is brine made from sodium chloride?", kind: "short", gold_doc_ids: ["d1"] },
  // Chunks d2#0, d2#1, d3#0 (only they hold "zinc") → documents d2, d3: gold at rank 2 (chunk rank 3).
  // R@1 = 0, R@2 = 1, RR = 1/2, nDCG = 1/log2(3).
  { id: "q2", question: "Tell me about zinc.", kind: "short", gold_doc_ids: ["d3"] },
  // d5 matches fractionating/column/ethanol, d6 only ethanol → d5, d6 at ranks 1, 2: R@1 = 1/2, R@2 = 1, RR = 1, nDCG = 1.
  { id: "q3", question: "How does a fractionating column separate ethanol?", kind: "multihop", gold_doc_ids: ["d5", "d6"] },
  // No gold document: counted in skipped_no_gold, not scored.
  { id: "q4", question: "What is the melting point of tungsten?", kind: "negative", gold_doc_ids: [] },
  // No word of it occurs in the corpus → nothing retrieved: all zeros.
  { id: "q5", question: "Which catalyst speeds up ammonia synthesis?", kind: "short", gold_doc_ids: ["d4"] },
];
const jsonl = (rows: readonly object[]) => rows.map((r) => JSON.stringify(r)).join("\n") + "\n";

let dir: string;
let corpus: string;
let questions: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "attr-rag-cli-eval-"));
  corpus = join(dir, "corpus.jsonl");
  questions = join(dir, "questions.jsonl");
  writeFileSync(corpus, jsonl(DOCS));
  writeFileSync(questions, jsonl(QUESTIONS));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("scoreRankings", () => {
  it("eval scoring - doc-level recall, MRR and nDCG@10 averaged over questions with gold ids only", () => {
    const s = scoreRankings(
      [
        { ranked: ["a", "a", "b"], gold: ["b"] }, // duplicates count once: b is at rank 2
        { ranked: ["x", "c"], gold: ["c", "d"] },
        { ranked: ["y"], gold: [] }, // skipped
      ],
      [1, 2],
    );
    expect(s.recall["1"]).toBe(0);
    expect(s.recall["2"]).toBeCloseTo((1 + 0.5) / 2, 12);
    expect(s.mrr).toBeCloseTo((0.5 + 0.5) / 2, 12);
    const ideal2 = 1 + 1 / Math.log2(3);
    expect(s["ndcg@10"]).toBeCloseTo((1 / Math.log2(3) + 1 / Math.log2(3) / ideal2) / 2, 12);
    expect(() => scoreRankings([{ ranked: ["a"], gold: [] }], [1])).toThrow(/no question has gold/);
  });

  it("eval scoring - --k lists are sorted and deduplicated; bad ones are usage errors", () => {
    expect(parseKList("30, 1,5,10,5")).toEqual([1, 5, 10, 30]);
    for (const bad of ["", "1,,5", "0", "-1", "2.5", "ten", "10001"]) expect(() => parseKList(bad), bad).toThrow(/--k/);
  });
});

describe("attr-rag eval retrieval", () => {
  it("cli eval - bm25 on a hand-checked tiny benchmark gives the exact doc-level scores; the temporary store is removed", () => {
    const tmp = mkdtempSync(join(dir, "tmp-"));
    const r = run(["eval", "retrieval", "--corpus", corpus, "--questions", questions, "--mode", "bm25", "--k", "1,2,5", "--json"], { ...process.env, TMPDIR: tmp });
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(Object.keys(report)).toEqual(["corpus", "questions", "evaluated", "skipped_no_gold", "modes", "chunks", "run"]);
    expect(report.run.command).toMatch(/^attr-rag eval retrieval /);
    expect(report).toMatchObject({ corpus: 6, questions: 5, evaluated: 4, skipped_no_gold: 1 });
    expect(Object.keys(report.modes)).toEqual(["bm25"]);
    const bm25 = report.modes.bm25;
    expect(Object.keys(bm25)).toEqual(["recall", "mrr", "ndcg@10"]);
    expect(Object.keys(bm25.recall)).toEqual(["1", "2", "5"]);
    expect(bm25.recall["1"]).toBeCloseTo((1 + 0 + 0.5 + 0) / 4, 12);
    // Without mapping chunks to documents first, q2's gold would be at rank 3 and R@2 would be 0.5.
    expect(bm25.recall["2"]).toBeCloseTo((1 + 1 + 1 + 0) / 4, 12);
    expect(bm25.recall["5"]).toBeCloseTo(0.75, 12);
    expect(bm25.mrr).toBeCloseTo((1 + 0.5 + 1 + 0) / 4, 12);
    expect(bm25["ndcg@10"]).toBeCloseTo((1 + 1 / Math.log2(3) + 1 + 0) / 4, 12);
    expect(r.stderr).toMatch(/eval: ingest: \d+\/\d+ KB, \d+ documents/);
    expect(r.stderr).toMatch(/6 documents, 8 chunks \(6 embedded, 0 unchanged\)/);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("cli eval - all modes into --store (reused on the second run, nothing re-embedded); default k; table without --json", () => {
    const store = join(dir, "store");
    const first = run(["eval", "retrieval", "--corpus", corpus, "--questions", questions, "--store", store, "--json"]);
    expect(first.code, first.stderr).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(Object.keys(report.modes)).toEqual(["dense", "bm25", "hybrid"]);
    for (const s of Object.values(report.modes) as { recall: Record<string, number>; mrr: number; "ndcg@10": number }[]) {
      expect(Object.keys(s.recall)).toEqual(["1", "5", "10", "30"]);
      for (const x of [...Object.values(s.recall), s.mrr, s["ndcg@10"]]) {
        expect(x).toBeGreaterThanOrEqual(0);
        expect(x).toBeLessThanOrEqual(1);
      }
      // Recall never falls as k grows.
      expect(s.recall["1"]).toBeLessThanOrEqual(s.recall["5"]!);
      expect(s.recall["5"]).toBeLessThanOrEqual(s.recall["30"]!);
    }
    expect(report.modes.bm25.mrr).toBeCloseTo(0.625, 12);

    const second = run(["eval", "retrieval", "--corpus", corpus, "--questions", questions, "--store", store, "--k", "1,2"]);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stderr).toMatch(/\(0 embedded, 6 unchanged\)/);
    expect(second.stdout).toMatch(/^corpus: 6 documents; questions: 5 \(4 evaluated, 1 without gold documents skipped\)\n/);
    expect(second.stdout).toMatch(/mode\s+R@1\s+R@2\s+MRR\s+nDCG@10\n/);
    expect(second.stdout).toMatch(/\nbm25\s+0\.3750\s+0\.7500\s+0\.6250\s+0\.6577\n/);
    expect(second.stdout).toMatch(/\ndense\s/);
    expect(second.stdout).toMatch(/\nhybrid\s/);

    // A store holding documents of another corpus would distort the scores.
    const fewer = join(dir, "fewer.jsonl");
    writeFileSync(fewer, jsonl(DOCS.slice(0, 5)));
    const mixed = run(["eval", "retrieval", "--corpus", fewer, "--questions", questions, "--store", store, "--mode", "bm25"]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/holds 1 document\(s\) that are not in .*fewer\.jsonl/);
  });

  it("cli eval - bad input is exit 2 with the file and line named, before any store is made", () => {
    const base = ["eval", "retrieval", "--corpus", corpus, "--questions", questions];
    const write = (name: string, text: string) => {
      const p = join(dir, name);
      writeFileSync(p, text);
      return p;
    };
    const cases: [string[], RegExp][] = [
      [["eval", "retrieval", "--corpus", join(dir, "nope.jsonl"), "--questions", questions], /--corpus .*nope\.jsonl: cannot read it \(no such file\)/],
      [["eval", "retrieval", "--corpus", corpus, "--questions", join(dir, "nope.jsonl")], /--questions .*nope\.jsonl: cannot read it \(no such file\)/],
      [["eval", "retrieval", "--corpus", dir, "--questions", questions], /--corpus .*: not a file/],
      [
        ["eval", "retrieval", "--corpus", corpus, "--questions", write("badjson.jsonl", jsonl(QUESTIONS.slice(0, 2)) + "{oops\n")],
        /--questions .*badjson\.jsonl: line 3: not valid JSON/,
      ],
      [
        ["eval", "retrieval", "--corpus", corpus, "--questions", write("noq.jsonl", jsonl([QUESTIONS[0]!, { id: "q9", gold_doc_ids: ["d1"] }]))],
        /--questions .*noq\.jsonl: line 2: field "question" must be a string, got nothing/,
      ],
      [
        ["eval", "retrieval", "--corpus", corpus, "--questions", write("badgold.jsonl", jsonl([{ id: "q", question: "x", gold_doc_ids: "d1" }]))],
        /line 1: field "gold_doc_ids" must be an array of strings/,
      ],
      [
        ["eval", "retrieval", "--corpus", corpus, "--questions", write("neg.jsonl", jsonl([QUESTIONS[3]!]))],
        /no question has gold_doc_ids; nothing to score/,
      ],
      [
        ["eval", "retrieval", "--corpus", write("badcorpus.jsonl", jsonl(DOCS.slice(0, 3)) + "\n" + JSON.stringify({ id: "d9" }) + "\n"), "--questions", questions],
        /--corpus .*badcorpus\.jsonl: line 5: field "text" must be a string, got nothing/,
      ],
      [[...base, "--mode", "sparse"], /--mode must be one of dense, bm25, hybrid, all; got "sparse"/],
      [[...base, "--k", "1,0"], /--k: "0" is not a positive integer/],
      [[...base, "--embedder", "word2vec"], /--embedder: unknown embedder "word2vec"/],
      [[...base, "--tune"], /--tune records the fitted fusion in the store .* needs --store DIR/],
    ];
    for (const [args, message] of cases) {
      const r = run(args);
      expect(r.code, `${args.join(" ")}\n${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe("");
    }
    const missing = run(["eval", "retrieval", "--questions", questions]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/required option '--corpus <file>' not specified/);
  });

  it("cli eval - --tune fits the fusion on the questions and records it in --store; later searches on the store use it", async () => {
    const store = join(dir, "tuned");
    const r = run(["eval", "retrieval", "--corpus", corpus, "--questions", questions, "--store", store, "--tune", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    const { tune } = report;
    expect(tune).toMatchObject({ questions: 4, grid_size: 39 });
    expect(tune.grid).toHaveLength(39);
    expect(tune.before.fusion).toEqual(DEFAULT_FUSION);
    // The best of the grid, and what the evaluation after tuning measured for hybrid.
    const best = Math.max(...tune.grid.map((g: { "ndcg@10": number }) => g["ndcg@10"]));
    expect(tune.chosen["ndcg@10"]).toBeCloseTo(best, 12);
    expect(tune.chosen["ndcg@10"]).toBeGreaterThanOrEqual(tune.before["ndcg@10"] - 1e-12);
    expect(report.modes.hybrid["ndcg@10"]).toBeCloseTo(tune.chosen["ndcg@10"], 12);
    expect(report.modes.hybrid.recall["30"]).toBeCloseTo(tune.chosen["recall@30"], 12);
    const chosen = tune.chosen.fusion;
    expect(report.fusion).toEqual({ ...chosen, from: "store" });
    // Premise: the tuned fusion differs from the default, so the search below can tell which one it used.
    expect(chosen).not.toEqual(DEFAULT_FUSION);

    const opened = await ChunkStore.open(store);
    try {
      expect(opened.fusion).toEqual(chosen);
    } finally {
      await opened.close();
    }

    // `search` on the store: hybrid must be the recorded fusion of its own BM25 and dense candidates.
    const query = "How does a fractionating column separate ethanol from water?";
    const searchHits = (mode: string, k: number): SearchHit[] => {
      const out = run(["search", "--store", store, "--mode", mode, "--k", String(k), "--query", query, "--json"]);
      expect(out.code, out.stderr).toBe(0);
      const hits: { chunk_id: string; doc_id: string; ordinal: number; score: number; text: string }[] = JSON.parse(out.stdout).hits;
      return hits.map((h) => ({ chunkId: h.chunk_id, docId: h.doc_id, ordinal: h.ordinal, start: 0, end: 0, text: h.text, score: h.score }));
    };
    const k = 5;
    const candidates = hybridCandidates(k);
    const bm25 = searchHits("bm25", candidates);
    const dense = searchHits("dense", candidates);
    const hybrid = searchHits("hybrid", k);
    const expected = fuseHits(bm25, dense, k, chosen);
    expect(hybrid.map((h) => h.chunkId)).toEqual(expected.map((h) => h.chunkId));
    hybrid.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 9));
    const withDefault = fuseHits(bm25, dense, k, DEFAULT_FUSION);
    expect(hybrid.map((h) => h.score)).not.toEqual(withDefault.map((h) => h.score));

    // A plain eval on the tuned store reports the recorded fusion; the text report names it.
    const again = run(["eval", "retrieval", "--corpus", corpus, "--questions", questions, "--store", store, "--mode", "hybrid"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/hybrid fusion: .* \(recorded in the store\)\n/);
    expect(again.stdout).not.toMatch(/^tune:/m);
  });
});
