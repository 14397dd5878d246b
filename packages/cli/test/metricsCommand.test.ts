import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { corpusBleu, jaccardSimilarity, rougeScores, sentenceBleu } from "@attr-rag/core";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));

function run(args: string[], input: string) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { input, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const FOX = { reference: "The quick brown fox jumps over the lazy dog", candidate: "The quick brown dog jumps on the log." };

describe("attr-rag metrics", () => {
  it("cli metrics - scores rouge-score's published example (rouge1 P 0.75, R 6/9; rougeL P 5/8, R 5/9)", () => {
    const r = run(["metrics"], JSON.stringify(FOX) + "\n");
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const out = JSON.parse(lines[0]!);
    expect(out.rouge.rouge1.p).toBeCloseTo(0.75, 12);
    expect(out.rouge.rouge1.r).toBeCloseTo(6 / 9, 12);
    expect(out.rouge.rouge1.f).toBeCloseTo(0.7058823529411765, 12);
    expect(out.rouge.rougeL.p).toBeCloseTo(5 / 8, 12);
    expect(out.rouge.rougeL.r).toBeCloseTo(5 / 9, 12);
    expect(Object.keys(out)).toEqual(["rouge", "rouge_stem", "jaccard", "bleu_sentence"]);
    expect(Object.keys(out.rouge_stem)).toEqual(["rouge1", "rouge2", "rougeL", "rougeLsum"]);
  });

  it("cli metrics - one output line per input line, equal to the library's numbers; --corpus adds corpus BLEU last", () => {
    const pairs = [
      FOX,
      { reference: "Add 10 mL of water.\nStir for 5 minutes.", candidate: "Stir the water for 5 minutes.\nAdd 10 mL." },
      { reference: "", candidate: "something" },
      { reference: "Heating the solutions gently", candidate: "heat the solution gently" },
    ];
    const r = run(["metrics", "--corpus"], pairs.map((p) => JSON.stringify(p)).join("\n") + "\n\n");
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toHaveLength(pairs.length + 1);
    pairs.forEach((p, i) => {
      const plain = rougeScores(p.reference, p.candidate);
      const stem = rougeScores(p.reference, p.candidate, { stemmer: true });
      expect(lines[i].rouge.rougeLsum.f).toBe(plain.rougeLsum.fmeasure);
      expect(lines[i].rouge_stem.rouge1.f).toBe(stem.rouge1.fmeasure);
      expect(lines[i].jaccard).toBe(jaccardSimilarity(p.reference, p.candidate));
      expect(lines[i].bleu_sentence).toBe(sentenceBleu(p.candidate, p.reference).score);
    });
    // The stemmer makes "Heating the solutions" and "heat the solution" agree fully on unigrams.
    expect(lines[3].rouge_stem.rouge1.f).toBe(1);
    expect(lines[3].rouge.rouge1.f).toBeLessThan(1);
    expect(lines[pairs.length]).toEqual({
      bleu_corpus: corpusBleu(pairs.map((p) => p.candidate), [pairs.map((p) => p.reference)]).score,
    });
  });

  it("cli metrics - bad JSON names the line, exits 2 and writes nothing to stdout", () => {
    const r = run(["metrics"], `${JSON.stringify(FOX)}\n\n{"reference": "a", "candidate": }\n${JSON.stringify(FOX)}\n`);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/line 3: not valid JSON/);
  });

  it("cli metrics - a missing or non-string field names the line and the field", () => {
    const missing = run(["metrics"], `${JSON.stringify(FOX)}\n{"reference": "a"}\n`);
    expect(missing.code).toBe(2);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toMatch(/line 2: field "candidate" must be a string, got nothing/);
    const wrongType = run(["metrics"], `{"reference": 5, "candidate": "x"}\n`);
    expect(wrongType.stderr).toMatch(/line 1: field "reference" must be a string, got 5/);
    const notObject = run(["metrics"], `[1,2]\n`);
    expect(notObject.stderr).toMatch(/line 1: expected a JSON object, got an array/);
  });

  it("cli metrics - empty input gives empty output; --corpus over nothing is an error, not a made-up score", () => {
    const empty = run(["metrics"], "");
    expect(empty.code).toBe(0);
    expect(empty.stdout).toBe("");
    const corpus = run(["metrics", "--corpus"], "\n");
    expect(corpus.code).toBe(2);
    expect(corpus.stdout).toBe("");
    expect(corpus.stderr).toMatch(/--corpus needs at least one input line/);
  });

  it("cli - --help documents every command; unknown commands and options exit 2", () => {
    const help = run(["--help"], "");
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/metrics/);
    const metricsHelp = run(["metrics", "--help"], "");
    expect(metricsHelp.code).toBe(0);
    expect(metricsHelp.stdout).toMatch(/--corpus/);
    expect(run(["no-such-command"], "").code).toBe(2);
    expect(run(["metrics", "--bogus"], "").code).toBe(2);
  });
});
