import { spawn } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ANSWER_METRICS,
  bootstrapMean,
  cosineSimilarity,
  JUDGE_CRITERIA,
  JUDGE_RETRY_MESSAGE,
  jaccardSimilarity,
  majorityWinners,
  rougeScores,
  sentenceBleu,
} from "@attr-rag/core";
import { createEmbedder } from "@attr-rag/index";
import { cleanEnv, type CliRun, DEMO_CORPUS, MAIN, REPO_ROOT, runCli, startServer, TEST_MODEL } from "../../cli/test/helpers/runCli.js";

// A five-question benchmark cut from the demo corpus (SPEC section 5 format, gold answers and spans), answered
// with stories260K by three methods, judged by a local OpenAI-compatible server this test runs. The judge's
// reply depends on the question, so every parsing path is taken: valid, fenced, invalid then valid on the
// retry, partial twice, invalid twice.
const METHODS = "topk:2,rerank:2,attr-rag";
const ASK = ["--k", "4", "--max-tokens", "8", "--context-size", "8192", "--methods", METHODS, "--model", TEST_MODEL, "--seed", "3"];
const KEY_ENV = "ATTR_RAG_TEST_JUDGE_KEY";
const KEY = "test-judge-key";

interface Row {
  question_id: string;
  method: string;
  answer: string;
  context_ids: string[];
  metrics: Record<string, number>;
  timings: Record<string, number>;
  judge?: { scores: Record<string, number>; missing: string[]; total: number | null; attempts: number; problem?: string };
}

const full = (v: number) => JSON.stringify(Object.fromEntries(JUDGE_CRITERIA.map((c) => [c, v])));
/** Reply per question (first attempt, retry). */
const SCRIPT: Record<string, [string, string]> = {
  "q-01": [full(4), full(4)],
  "q-02": ["Overall this is a decent answer: 4/5.", full(2)],
  "q-03": [JSON.stringify({ relevance: 3, correctness: 2, completeness: 1, coherence: 4 }), JSON.stringify({ relevance: 3, correctness: 2, completeness: 1, coherence: 4 })],
  "q-04": ["not json", '{"relevance": 5, "correctness":'],
  "q-05": ["```json\n" + full(5) + "\n```", full(5)],
};

let dir: string;
let bench: string;
let judge: Server;
let judgeUrl: string;
const judgeRequests: { question: string; retry: boolean; auth: string | undefined }[] = [];
let questions: { id: string; question: string; answer: string }[];

function startJudge(): Promise<void> {
  judge = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      if (req.url !== "/v1/chat/completions" || req.method !== "POST") {
        res.writeHead(404).end("no such endpoint");
        return;
      }
      const auth = req.headers.authorization;
      if (auth !== `Bearer ${KEY}`) {
        res.writeHead(401).end('{"error":"bad key"}');
        return;
      }
      const { messages, temperature } = JSON.parse(body) as { messages: { role: string; content: string }[]; temperature: number };
      const user = messages[1]!.content;
      const q = questions.find((x) => user.includes(x.question))!;
      const retry = messages.at(-1)!.content === JUDGE_RETRY_MESSAGE;
      judgeRequests.push({ question: q.id, retry, auth });
      expect(temperature).toBe(0);
      const reply = SCRIPT[q.id]![retry ? 1 : 0];
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ choices: [{ message: { role: "assistant", content: reply } }] }));
    });
  });
  return new Promise((resolve) => judge.listen(0, "127.0.0.1", () => resolve()));
}

const readRowsFile = (path: string): Row[] =>
  readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Row);
const withoutTimings = (rows: Row[]) =>
  rows.map(({ timings: _t, ...r }) => r).sort((a, b) => `${a.question_id} ${a.method}`.localeCompare(`${b.question_id} ${b.method}`));
const judgeArgs = () => ["--judge-url", judgeUrl, "--judge-model", "test-judge", "--judge-key-env", KEY_ENV];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "attr-rag-eval-answers-"));
  bench = join(dir, "bench");
  mkdirSync(bench);
  copyFileSync(DEMO_CORPUS, join(bench, "corpus.jsonl"));
  const lines = readFileSync(join(REPO_ROOT, "examples/demo-corpus/questions.jsonl"), "utf8").trim().split("\n").slice(0, 5);
  writeFileSync(join(bench, "questions.jsonl"), `${lines.join("\n")}\n`);
  questions = lines.map((l) => JSON.parse(l) as { id: string; question: string; answer: string });
  await startJudge();
  judgeUrl = `http://127.0.0.1:${(judge.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise((r) => judge.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe("attr-rag eval answers", () => {
  // One full run that every test below reads (each can run alone: the run is setup, not a test of its own).
  let run: CliRun;
  let rows: Row[];
  let summary: Record<string, any>;
  let judgeRequestsOfRun: typeof judgeRequests;
  const out = () => join(dir, "run-a");

  beforeAll(async () => {
    run = await runCli(["eval", "answers", "--benchmark", bench, "--out", out(), "--store", join(dir, "store"), "--report", join(dir, "report.html"), ...ASK, ...judgeArgs()], {
      [KEY_ENV]: KEY,
    });
    judgeRequestsOfRun = judgeRequests.slice();
    expect(run.code, run.stderr).toBe(0);
    rows = readRowsFile(join(out(), "rows.jsonl"));
    summary = JSON.parse(readFileSync(join(out(), "summary.json"), "utf8"));
  });

  it("eval answers - runs every method on a five-question benchmark and writes rows, summary and a report", () => {
    const r = run;
    expect(r.stderr).toMatch(/eval answers: 15\/15 rows/);
    expect(r.code, r.stderr).toBe(0);
    expect(rows).toHaveLength(15);
    expect(new Set(rows.map((x) => `${x.question_id} ${x.method}`)).size).toBe(15);
    for (const row of rows) {
      expect(Object.keys(row.metrics).sort()).toEqual([...ANSWER_METRICS].sort());
      for (const m of ANSWER_METRICS) expect(Math.abs(row.metrics[m]!)).toBeLessThanOrEqual(1);
      expect(row.context_ids.length).toBeGreaterThan(0);
      expect(row.timings["harness_ms"]).toBeGreaterThan(0);
    }
    const byMethod = (m: string) => rows.filter((x) => x.method === m);
    expect(byMethod("topk:2")).toHaveLength(5);
    for (const row of byMethod("topk:2")) expect(row.context_ids.length).toBeLessThanOrEqual(2);
    expect(byMethod("attr-rag")).toHaveLength(5);
    for (const row of byMethod("attr-rag")) expect(row.timings["occlusion_ms"]).toBeGreaterThan(0);
    // Table I on stdout: a line per metric, the methods as columns, a best mark on every metric line.
    const lines = r.stdout.split("\n");
    expect(lines[0]).toMatch(/^metric\s+topk:2\s+rerank:2\s+attr-rag$/);
    for (const label of ["Cosine", "BLEU", "Jaccard", "ROUGE-1 F1", "ROUGE-2 F1", "ROUGE-L F1", "ROUGE-Lsum F1"]) {
      expect(lines.find((l) => l.startsWith(`${label} `))).toMatch(/\*/);
    }
    expect(summary["questions"]).toBe(5);
    expect(summary["judge"]).toBe(`http:test-judge@${new URL(judgeUrl).origin}/v1/`);
    expect(summary["run"]["command"]).toContain("eval answers");
  });

  it("eval answers - the metric values of the rows are packages/core's on the answer and the gold answer", async () => {
    const embedder = await createEmbedder("use-lite");
    try {
      for (const row of [rows[0]!, rows[7]!, rows[14]!]) {
        const gold = questions.find((q) => q.id === row.question_id)!.answer;
        const rouge = rougeScores(gold, row.answer);
        expect(row.metrics["rouge1"]).toBe(rouge.rouge1.fmeasure);
        expect(row.metrics["rouge2"]).toBe(rouge.rouge2.fmeasure);
        expect(row.metrics["rougeL"]).toBe(rouge.rougeL.fmeasure);
        expect(row.metrics["rougeLsum"]).toBe(rouge.rougeLsum.fmeasure);
        expect(row.metrics["jaccard"]).toBe(jaccardSimilarity(gold, row.answer));
        expect(row.metrics["bleu"]).toBeCloseTo(sentenceBleu(row.answer, gold).score / 100, 14);
        const [a, g] = await embedder.embed([row.answer, gold]);
        expect(row.metrics["cosine"]).toBeCloseTo(cosineSimilarity(a!, g!), 5);
      }
    } finally {
      await embedder.dispose();
    }
  });

  it("eval answers - summary means, bootstrap intervals, best marks and majority wins follow from the rows", () => {
    const methods = METHODS.split(",");
    expect(Object.keys(summary["methods"])).toEqual(methods);
    const { resamples, seed } = summary["bootstrap"];
    expect(seed).toBe(3);
    for (const m of methods) {
      const mine = rows.filter((r) => r.method === m);
      for (const metric of ANSWER_METRICS) {
        const values = mine.map((r) => r.metrics[metric]!);
        const s = summary["methods"][m]["metrics"][metric];
        expect(s.mean).toBeCloseTo(values.reduce((a, b) => a + b, 0) / values.length, 12);
        expect(s).toEqual(bootstrapMean(values, { resamples, seed }));
        expect(s.low).toBeLessThanOrEqual(s.mean + 1e-12);
        expect(s.high).toBeGreaterThanOrEqual(s.mean - 1e-12);
      }
    }
    for (const metric of ANSWER_METRICS) {
      const means = methods.map((m) => summary["methods"][m]["metrics"][metric].mean as number);
      expect(summary["best"][metric]).toEqual(methods.filter((_, i) => Math.max(...means) - means[i]! <= 1e-12));
    }
    const wins = Object.fromEntries(methods.map((m) => [m, 0]));
    for (const q of questions) {
      const perMethod = Object.fromEntries(methods.map((m) => [m, rows.find((r) => r.question_id === q.id && r.method === m)!.metrics]));
      for (const w of majorityWinners(perMethod, ANSWER_METRICS).winners) wins[w]!++;
    }
    expect(Object.fromEntries(methods.map((m) => [m, summary["methods"][m]["wins"]]))).toEqual(wins);
    expect(summary["compared_questions"]).toBe(5);
  });

  it("eval answers - the judge: valid, fenced and retried replies are read; partial and invalid ones are missing, never 0", () => {
    const byQuestion = (id: string) => rows.filter((r) => r.question_id === id).map((r) => r.judge!);
    for (const j of byQuestion("q-01")) expect(j).toMatchObject({ total: 24, missing: [], attempts: 1 });
    for (const j of byQuestion("q-05")) expect(j).toMatchObject({ total: 30, missing: [], attempts: 1 }); // fenced JSON
    for (const j of byQuestion("q-02")) expect(j).toMatchObject({ total: 12, missing: [], attempts: 2 }); // prose, then JSON
    for (const j of byQuestion("q-03")) {
      expect(j.attempts).toBe(2);
      expect(j.scores).toEqual({ relevance: 3, correctness: 2, completeness: 1, coherence: 4 });
      expect(j.missing).toEqual(["clarity", "missing_steps"]);
      expect(j.total).toBeNull();
    }
    for (const j of byQuestion("q-04")) {
      expect(j).toMatchObject({ scores: {}, total: null, attempts: 2 });
      expect(j.missing).toEqual([...JUDGE_CRITERIA]);
      expect(j.problem).toMatch(/not JSON/);
    }
    // 3 methods × (1 + 2 + 2 + 2 + 1) requests, every one with the key from the environment variable.
    expect(judgeRequestsOfRun).toHaveLength(3 * 8);
    expect(judgeRequestsOfRun.every((r) => r.auth === `Bearer ${KEY}`)).toBe(true);
    for (const m of METHODS.split(",")) {
      const j = summary["methods"][m]["judge"];
      expect(j).toMatchObject({ judged: 5, incomplete: 2, retried: 3 });
      // Means over the scores that were read: relevance 4, 2, 3, 5 (q-04 missing); clarity 4, 2, 5.
      expect(j.criteria.relevance.score.mean).toBeCloseTo((4 + 2 + 3 + 5) / 4, 12);
      expect(j.criteria.relevance.missing).toBe(1);
      expect(j.criteria.clarity.score.mean).toBeCloseTo((4 + 2 + 5) / 3, 12);
      expect(j.criteria.clarity.missing).toBe(2);
      expect(j.total.mean).toBeCloseTo((24 + 12 + 30) / 3, 12);
    }
  });

  it("eval answers - the HTML report: Table I, Table II, Fig. 1 and their charts, self-contained", () => {
    const html = readFileSync(join(dir, "report.html"), "utf8");
    const table = (id: string) => new RegExp(`<table[^>]*id="${id}">([\\s\\S]*?)</table>`).exec(html)![1]!;
    const tableI = table("table-i");
    expect(tableI.match(/<tr data-metric=/g)).toHaveLength(7);
    expect(tableI).toMatch(/<th>topk:2<\/th><th>rerank:2<\/th><th>attr-rag<\/th>/);
    expect(tableI.match(/<b>/g)!.length).toBeGreaterThanOrEqual(7); // a best mark per metric
    const tableII = table("table-ii");
    expect(tableII.match(/<tr data-criterion=/g)).toHaveLength(7);
    expect(tableII).toMatch(/\(1 missing\)/);
    const fig1 = table("fig-1");
    expect(fig1.match(/<tr data-mode=/g)).toHaveLength(3);
    expect(fig1).toMatch(/k = 5[\s\S]*k = 30/);
    expect(html.match(/<svg /g)!.length).toBeGreaterThanOrEqual(4);
    expect(html).not.toMatch(/<script|<link|src="http|href="http/);
    const d = summary["retrieval_diagnostics"];
    expect(d.questions).toBe(5);
    for (const mode of ["dense", "bm25", "hybrid"]) {
      let last = 0;
      for (const k of [5, 10, 15, 20, 25, 30]) {
        const at = d.modes[mode][String(k)];
        expect(at.gold).toBeGreaterThanOrEqual(last); // more retrieved, never fewer gold chunks
        expect(at.gold).toBeLessThanOrEqual(d.mean_gold_chunks);
        expect(at.density).toBeCloseTo(at.gold / k, 12);
        last = at.gold;
      }
    }
  });

  it("eval answers - against a gateway (--server) the same pipeline gives the embedded rows", async () => {
    const server = await startServer(["serve", "--store", join(dir, "store"), "--model", TEST_MODEL, "--context-size", "8192", "--port", "0"]);
    try {
      const outS = join(dir, "run-server");
      const r = await runCli(["eval", "answers", "--benchmark", bench, "--out", outS, "--server", server.address, "--limit", "2", ...ASK.slice(0, 4), "--methods", METHODS, "--seed", "3", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      const remote = readRowsFile(join(outS, "rows.jsonl"));
      expect(remote).toHaveLength(6);
      const embedded = rows.filter((x) => x.question_id === "q-01" || x.question_id === "q-02").map(({ judge: _j, ...x }) => x);
      expect(withoutTimings(remote)).toEqual(withoutTimings(embedded as Row[]));
      const s = JSON.parse(r.stdout);
      expect(s.target).toBe(`server ${server.address}`);
      expect(s.retrieval_diagnostics).toBeUndefined(); // needs a local store
    } finally {
      await server.stop();
    }
  });

  it("eval answers - a killed run resumes where it stopped: no row scored twice, the same rows as an uninterrupted run", async () => {
    const outB = join(dir, "run-b");
    const args = ["eval", "answers", "--benchmark", bench, "--out", outB, "--store", join(dir, "store"), ...ASK, ...judgeArgs()];
    const child = spawn(process.execPath, [MAIN, ...args], { stdio: ["ignore", "ignore", "pipe"], env: { ...cleanEnv(), [KEY_ENV]: KEY } });
    const exited = new Promise((r) => child.on("exit", r));
    const rowsPath = join(outB, "rows.jsonl");
    const count = () => (existsSync(rowsPath) ? readFileSync(rowsPath, "utf8").split("\n").filter((l) => l !== "").length : 0);
    try {
      while (count() < 4 && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    } finally {
      child.kill("SIGKILL");
      await exited;
    }
    const before = readFileSync(rowsPath, "utf8");
    const kept = count();
    expect(kept).toBeGreaterThanOrEqual(4);
    expect(kept).toBeLessThan(15);
    appendFileSync(rowsPath, '{"question_id":"q-0'); // a write the kill cut short

    const again = await runCli(args, { [KEY_ENV]: KEY });
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toMatch(/already holds rows\.jsonl; pass --resume/);

    const resumed = await runCli([...args, "--resume"], { [KEY_ENV]: KEY });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/the last line is incomplete/);
    expect(resumed.stderr).toMatch(new RegExp(`resuming: ${kept} of 15 rows`));
    const after = readFileSync(rowsPath, "utf8");
    expect(after.startsWith(before)).toBe(true); // the rows written before the kill are untouched
    const rowsB = readRowsFile(rowsPath);
    expect(rowsB).toHaveLength(15);
    expect(new Set(rowsB.map((x) => `${x.question_id} ${x.method}`)).size).toBe(15);
    expect(withoutTimings(rowsB)).toEqual(withoutTimings(rows)); // deterministic: the same answers, scores and verdicts

    // A finished run resumed again asks nothing and rewrites the same summary.
    const noop = await runCli([...args, "--resume"], { [KEY_ENV]: KEY });
    expect(noop.code, noop.stderr).toBe(0);
    expect(noop.stderr).toMatch(/resuming: 15 of 15 rows/);
    expect(readRowsFile(rowsPath)).toHaveLength(15);

    const changed = await runCli(["eval", "answers", "--benchmark", bench, "--out", outB, "--resume", ...ASK.slice(0, 2), "--max-tokens", "20", "--methods", METHODS, "--model", TEST_MODEL, "--seed", "3", ...judgeArgs()], { [KEY_ENV]: KEY });
    expect(changed.code).toBe(2);
    expect(changed.stderr).toMatch(/--resume: the settings differ .*maxTokens/);
  });

  it("eval answers - bad input exits 2 naming what to fix, before any model work", async () => {
    const base = ["eval", "answers", "--out", join(dir, "bad"), "--model", TEST_MODEL];
    const missing = await runCli([...base, "--benchmark", join(dir, "nowhere")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/corpus\.jsonl is missing/);
    const methods = await runCli([...base, "--benchmark", bench, "--methods", "topk:10,best"]);
    expect(methods.code).toBe(2);
    expect(methods.stderr).toMatch(/"best" is not a method; use topk:K, rerank:K or attr-rag/);
    const both = await runCli([...base, "--benchmark", bench, "--judge", TEST_MODEL, "--judge-url", judgeUrl]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/exclude each other/);
    const noKey = await runCli([...base, "--benchmark", bench, ...judgeArgs()]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(new RegExp(`--judge-key-env ${KEY_ENV}: that environment variable is not set`));
    const badMode = await runCli([...base, "--benchmark", bench, "--mode", "hybird"]);
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toMatch(/--mode must be one of dense, bm25, hybrid, got "hybird"/);
    expect(existsSync(join(dir, "bad", "rows.jsonl"))).toBe(false); // nothing started, so a fixed rerun needs no --resume
    const dupDir = join(dir, "dup");
    mkdirSync(dupDir);
    copyFileSync(DEMO_CORPUS, join(dupDir, "corpus.jsonl"));
    writeFileSync(join(dupDir, "questions.jsonl"), `${JSON.stringify({ id: "a", question: "Q?", answer: "A" })}\n${JSON.stringify({ id: "a", question: "Q2?", answer: "B" })}\n`);
    const dup = await runCli([...base, "--benchmark", dupDir]);
    expect(dup.code).toBe(2);
    expect(dup.stderr).toMatch(/line 2: id "a" was already used on line 1/);
    const noAnswer = join(dir, "noanswer");
    mkdirSync(noAnswer);
    copyFileSync(DEMO_CORPUS, join(noAnswer, "corpus.jsonl"));
    writeFileSync(join(noAnswer, "questions.jsonl"), `${JSON.stringify({ id: "a", question: "Q?" })}\n`);
    const na = await runCli([...base, "--benchmark", noAnswer]);
    expect(na.code).toBe(2);
    expect(na.stderr).toMatch(/field "answer" must be a non-empty string/);
  });

  it("eval answers - a local GGUF judge runs through the engine; its unparseable replies are recorded as missing after the retry", async () => {
    const outL = join(dir, "local-judge");
    const r = await runCli(["eval", "answers", "--benchmark", bench, "--out", outL, "--store", join(dir, "store"), "--limit", "1", ...ASK.slice(0, 6), "--methods", "topk:2", "--model", TEST_MODEL, "--judge", TEST_MODEL, "--judge-context", "4096", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const [row] = readRowsFile(join(outL, "rows.jsonl"));
    // stories260K writes stories, not JSON: both attempts are read as nothing, and nothing becomes a 0.
    expect(row!.judge).toMatchObject({ scores: {}, total: null, attempts: 2 });
    expect(row!.judge!.missing).toEqual([...JUDGE_CRITERIA]);
    const s = JSON.parse(r.stdout);
    expect(s.judge).toBe("gguf:stories260K.gguf");
    expect(s.methods["topk:2"].judge).toMatchObject({ judged: 1, incomplete: 1, retried: 1, total: null });
    expect(s.methods["topk:2"].judge.criteria.relevance).toEqual({ score: null, missing: 1 });
  });

  it("eval answers - an unreachable judge writes no row: each is recorded in errors.jsonl (asked again on --resume), and 5 in a row stop the run", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const outD = join(dir, "dead-judge");
    const r = await runCli(
      ["eval", "answers", "--benchmark", bench, "--out", outD, "--store", join(dir, "store"), ...ASK.slice(0, 6), "--methods", "topk:2", "--model", TEST_MODEL, "--judge-url", `http://127.0.0.1:${port}/v1`, "--judge-model", "m"],
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/5 Asks in a row failed, the last with: the judge failed/);
    expect(existsSync(join(outD, "rows.jsonl")) ? readFileSync(join(outD, "rows.jsonl"), "utf8") : "").toBe("");
    const errors = readFileSync(join(outD, "errors.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(errors.map((e) => e.question_id)).toEqual(["q-01", "q-02", "q-03", "q-04", "q-05"]);
  });

  it("eval answers - a judge that refuses the key stops the run with exit 2 naming the endpoint", async () => {
    const r = await runCli(
      ["eval", "answers", "--benchmark", bench, "--out", join(dir, "badkey"), "--store", join(dir, "store"), "--limit", "1", ...ASK.slice(0, 6), "--methods", "topk:2", "--model", TEST_MODEL, ...judgeArgs()],
      { [KEY_ENV]: "wrong" },
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/judge http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: HTTP 401/);
  });
});
