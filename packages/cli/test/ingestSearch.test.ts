import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shippedModelPath } from "@attr-rag/engine";
import { ChunkStore } from "@attr-rag/index";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const CORPUS = fileURLToPath(new URL("../../../examples/demo-corpus/corpus.jsonl", import.meta.url));
const STORIES = shippedModelPath();
const OXYGEN = "How do I collect oxygen gas over water?";

function run(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: "utf8", timeout: 120_000, ...(input !== undefined ? { input } : {}) });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Hit {
  chunk_id: string;
  doc_id: string;
  ordinal: number;
  score: number;
  text: string;
}

function search(store: string, mode: string, query: string, k = 5): Hit[] {
  const r = run(["search", "--store", store, "--mode", mode, "--k", String(k), "--json", "--query", query]);
  expect(r.code, r.stderr).toBe(0);
  const lines = r.stdout.trim().split("\n");
  expect(lines).toHaveLength(1);
  const out = JSON.parse(lines[0]!) as { id: string; hits: Hit[] };
  expect(out.id).toBe("query");
  return out.hits;
}

let dir: string;
let store: string;
let firstIngest: ReturnType<typeof run>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "attr-rag-cli-index-"));
  store = join(dir, "store");
  firstIngest = run(["ingest", "--store", store, "--json", CORPUS]);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("attr-rag ingest", () => {
  it("cli ingest - indexes the demo corpus with use-lite (progress on stderr); re-ingesting changes nothing", () => {
    expect(firstIngest.code, firstIngest.stderr).toBe(0);
    const summary = JSON.parse(firstIngest.stdout);
    expect(summary).toMatchObject({ indexed: 32, replaced: 0, unchanged: 0, updated: 0, skipped: 0, failed: 0, store: { documents: 32 } });
    expect(summary.chunks).toBeGreaterThanOrEqual(32);
    expect(summary.store.chunks).toBe(summary.chunks);
    expect(firstIngest.stderr).toMatch(/ingest: \d+\/\d+ KB, 32 documents/);

    const again = run(["ingest", "--store", store, CORPUS]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^indexed 0, replaced 0, unchanged 32, updated 0, skipped 0, failed 0; 0 chunks written; store .* holds 32 documents/);
  });

  it("cli ingest - a failing file is reported and the rest ingested (exit 1); skipped files are listed", () => {
    const docs = join(dir, "docs");
    mkdirSync(docs);
    writeFileSync(join(docs, "distill.md"), "# Simple distillation\n\nHeat the flask gently and collect the distillate in a cooled receiver.");
    writeFileSync(join(docs, "latin1.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    writeFileSync(join(docs, "empty.txt"), "\n\n");
    writeFileSync(join(docs, "photo.png"), "png");
    const small = join(dir, "small-store");
    const r = run(["ingest", "--store", small, "--json", docs, join(dir, "missing.txt")]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ indexed: 1, skipped: 2, failed: 2, store: { documents: 1 } });
    expect(r.stderr).toMatch(/failed .*latin1\.txt: invalid UTF-8 at byte offset 3/);
    expect(r.stderr).toMatch(/failed .*missing\.txt: cannot read it: ENOENT/);
    expect(r.stderr).toMatch(/skipped .*empty\.txt: empty document/);
    expect(r.stderr).toMatch(/skipped .*photo\.png: unsupported file type "\.png"/);
    expect(r.stderr).toMatch(/attr-rag: error: 2 file\(s\) or document\(s\) failed/);
    const hits = search(small, "bm25", "distillation receiver");
    expect(hits.map((h) => h.doc_id)).toEqual(["distill.md"]);
  });

  it("cli ingest - an unknown embedder or another store's embedder is exit 2 and leaves the store untouched", () => {
    const unknown = run(["ingest", "--store", store, "--embedder", "word2vec", CORPUS]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/--embedder: unknown embedder "word2vec"; use "use-lite" or "gguf:/);
    expect(run(["ingest", "--store", store]).code).toBe(2);
    const mismatch = run(["ingest", "--store", store, "--embedder", `gguf:${STORIES}`, CORPUS]);
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toMatch(/was built by embedder "use-lite@0\.2\.0" \(512 dimensions\) but was opened with "gguf:stories260K\.gguf@\d+"/);
    const query = run(["search", "--store", store, "--mode", "dense", "--embedder", `gguf:${STORIES}`, "--query", OXYGEN]);
    expect(query.code).toBe(2);
    expect(query.stderr).toMatch(/not "gguf:stories260K\.gguf@\d+"/);
    const after = JSON.parse(run(["ingest", "--store", store, "--json", CORPUS]).stdout);
    expect(after).toMatchObject({ unchanged: 32, indexed: 0, store: { documents: 32, chunks: JSON.parse(firstIngest.stdout).chunks } });
  });

  it("cli ingest --quantization - f16 by default, f32 on request; a bad value, or changing a store's, is exit 2", async () => {
    const one = join(dir, "titration.md");
    writeFileSync(one, "# Titration\n\nAdd the base drop by drop until the indicator turns pale pink.");
    const bad = run(["ingest", "--store", join(dir, "q-bad"), "--quantization", "f8", one]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--quantization must be f32 or f16, got "f8"/);
    expect(existsSync(join(dir, "q-bad"))).toBe(false);
    const f32 = join(dir, "q-f32");
    const made = run(["ingest", "--store", f32, "--quantization", "f32", "--json", one]);
    expect(made.code, made.stderr).toBe(0);
    const change = run(["ingest", "--store", f32, "--quantization", "f16", one]);
    expect(change.code).toBe(2);
    expect(change.stderr).toMatch(/holds f32 vectors, not f16; quantization is fixed when a store is created/);
    for (const [path, type] of [[store, "f16"], [f32, "f32"]] as const) {
      const opened = await ChunkStore.open(path);
      try {
        expect(opened.stats().quantization).toBe(type);
      } finally {
        await opened.close();
      }
    }
  });
});

describe("attr-rag search", () => {
  it("cli search - the oxygen question finds the oxygen experiment (exp-02) in every mode", () => {
    const bm25 = search(store, "bm25", OXYGEN);
    const dense = search(store, "dense", OXYGEN);
    const hybrid = search(store, "hybrid", OXYGEN);
    for (const hits of [bm25, dense, hybrid]) {
      expect(hits).toHaveLength(5);
      for (const h of hits) {
        expect(Object.keys(h)).toEqual(["chunk_id", "doc_id", "ordinal", "score", "text"]);
        expect(h.chunk_id).toBe(`${h.doc_id}#${h.ordinal}`);
        expect(h.text.length).toBeGreaterThan(0);
      }
      for (let i = 1; i < hits.length; i++) expect(hits[i]!.score).toBeLessThanOrEqual(hits[i - 1]!.score);
    }
    expect(bm25[0]!.doc_id).toBe("exp-02");
    expect(dense[0]!.doc_id).toBe("exp-02");
    expect(dense[0]!.score).toBeGreaterThan(0.3);
    expect(dense[0]!.score).toBeLessThanOrEqual(1);
    // Hybrid fuses both rankings (BM25 weighted 4:1): exp-02 comes first, and a distractor about oxygen
    // hazards (dst-01), second in both lists, stays right behind it.
    expect(hybrid[0]!.doc_id).toBe("exp-02");
    expect(hybrid.slice(0, 3).map((h) => h.doc_id)).toContain("dst-01");
    const bm25Ids = new Set(bm25.map((h) => h.chunk_id));
    const denseIds = new Set(dense.map((h) => h.chunk_id));
    for (const h of hybrid) expect(bm25Ids.has(h.chunk_id) || denseIds.has(h.chunk_id)).toBe(true);
  });

  it("cli search - JSON lines on stdin give one output line per query, in order; the default output is readable", () => {
    const input = [
      JSON.stringify({ id: "q1", question: OXYGEN, answer: "ignored", gold_doc_ids: [] }),
      "",
      JSON.stringify({ id: 7, question: "acetaminophen synthesis from p-aminophenol" }),
    ].join("\n");
    const r = run(["search", "--store", store, "--mode", "bm25", "--k", "3", "--json"], input);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id)).toEqual(["q1", "7"]);
    expect(lines[1].hits).toHaveLength(3);
    expect(lines[1].hits.map((h: Hit) => h.doc_id)).toContain("exp-01");
    const text = run(["search", "--store", store, "--mode", "bm25", "--k", "2", "--query", OXYGEN]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^query: How do I collect oxygen gas over water\?\n {4}1\. exp-02#\d+ {2}\d+\.\d{4} {2}\S/);
  });

  it("cli search - bad k, mode, input and store are exit 2 with a clear message and no output", () => {
    const cases: [string[], string | undefined, RegExp][] = [
      [["--k", "0"], undefined, /--k must be a positive integer, got "0"/],
      [["--k", "10001"], undefined, /--k must be at most 10000, got 10001/],
      [["--k", "ten"], undefined, /--k must be a positive integer, got "ten"/],
      [["--mode", "fuzzy"], undefined, /--mode must be one of dense, bm25, hybrid, got "fuzzy"/],
      [["--query", "  "], undefined, /--query is empty/],
      [[], '{"id":"a","question":"ok"}\n{"id": "b", "question": \n', /line 2: not valid JSON/],
      [[], '{"id":"a"}\n', /line 1: field "question" must be a string, got nothing/],
      [[], "", /no queries on standard input/],
    ];
    for (const [args, input, message] of cases) {
      const withQuery = input === undefined && !args.includes("--query") ? ["--query", OXYGEN] : [];
      const r = run(["search", "--store", store, ...args, ...withQuery], input);
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe("");
    }
    const missing = run(["search", "--store", join(dir, "no-such-store"), "--query", OXYGEN]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no store at .*no-such-store: store directory .* does not exist; build one with `attr-rag ingest --store/);
    const notAStore = run(["search", "--store", dir, "--mode", "bm25", "--query", OXYGEN]);
    expect(notAStore.code).toBe(2);
    expect(notAStore.stderr).toMatch(/is not a store/);
  });
});
