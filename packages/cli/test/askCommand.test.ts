import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials } from "@grpc/grpc-js";
import { AskEvent, AskRequest, AttrRagServiceClient, type AttributionTable, type SelectionExplanation } from "@attr-rag/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestDemoCorpus, REPO_ROOT, runCli, startServer, TEST_MODEL } from "./helpers/runCli.js";

const dir = mkdtempSync(join(tmpdir(), "attr-rag-ask-"));
const store = join(dir, "store");
const QUESTION = "Explain all the required steps of the acetaminophen synthesis.";
// Small engine settings so each ask takes seconds; the same for the server and the embedded CLI.
const ENGINE = ["--model", TEST_MODEL, "--context-size", "16384", "--sequences", "4"];
const REQUEST = ["--k", "6", "--max-tokens", "12"];

beforeAll(async () => {
  const ingest = await ingestDemoCorpus(store);
  expect(ingest.code, ingest.stderr).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function attributionAndSelection(events: readonly AskEvent[]): { attribution: AttributionTable; selection: SelectionExplanation } {
  const find = (c: string) => events.find((e) => e.stage?.$case === c)?.stage?.value;
  return { attribution: find("attribution") as AttributionTable, selection: find("selection") as SelectionExplanation };
}

describe("attr-rag ask and serve", () => {
  it("cli ask - the same query through the gRPC Ask and `attr-rag ask --json` selects the same sets", async () => {
    const server = await startServer(["serve", "--store", store, ...ENGINE, "--port", "0"]);
    const client = new AttrRagServiceClient(server.address, credentials.createInsecure());
    const viaGrpc: AskEvent[] = await new Promise((resolve, reject) => {
      const events: AskEvent[] = [];
      const call = client.ask(AskRequest.fromPartial({ question: QUESTION, retrieval: { k: 6, mode: 0 }, generation: { maxTokens: 12, strategy: 0 } }));
      call.on("data", (r: { event: AskEvent }) => events.push(r.event));
      call.on("error", reject);
      call.on("end", () => resolve(events));
    });
    client.close();
    const remote = await runCli(["ask", QUESTION, "--server", server.address, ...REQUEST]);
    expect(await server.stop()).toBe(0);
    expect(remote.code, remote.stderr).toBe(0);
    expect(remote.stdout).toMatch(/^Answer:\n/);
    expect(remote.stdout).toMatch(/Attribution \(α = 1 − similarity/);

    const embedded = await runCli(["ask", QUESTION, "--json", "--store", store, ...ENGINE, ...REQUEST]);
    expect(embedded.code, embedded.stderr).toBe(0);
    const viaCli = embedded.stdout.trim().split("\n").map((line) => AskEvent.fromJSON(JSON.parse(line)));
    expect(viaCli.at(-1)?.stage?.$case).toBe("done");

    const a = attributionAndSelection(viaGrpc);
    const b = attributionAndSelection(viaCli);
    expect(b.selection.selectedSetIds).toEqual(a.selection.selectedSetIds);
    expect(b.selection.selectedSetIds.length).toBeGreaterThan(0);
    expect(b.attribution.rows.map((r) => r.setId)).toEqual(a.attribution.rows.map((r) => r.setId));
    b.attribution.rows.forEach((row, i) => row.scores.forEach((s, k) => expect(s.alpha).toBeCloseTo(a.attribution.rows[i]!.scores[k]!.alpha, 9)));
  });

  it("cli serve - --http-port serves HTTP/JSON and the web console beside the gRPC port", async () => {
    const server = await startServer(["serve", "--store", store, ...ENGINE, "--port", "0", "--http-port", "0"]);
    try {
      expect(server.http).toMatch(/^127\.0\.0\.1:\d+$/);
      const page = await fetch(`http://${server.http}/`);
      expect(page.headers.get("content-type")).toContain("text/html");
      expect(await page.text()).toContain('<script type="module" src="app.js">');
      expect((await fetch(`http://${server.http}/app.js`)).status).toBe(200);
      const search = await fetch(`http://${server.http}/attr_rag.v1.IndexService/Search`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "acetic anhydride", options: { k: 2 } }),
      });
      expect(((await search.json()) as { chunks: unknown[] }).chunks).toHaveLength(2);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    const bad = await runCli(["serve", "--store", store, ...ENGINE, "--http-port", "http"]);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/--http-port must be an integer from 0 to 65535/)]);
  });

  it("cli ask - a baseline run answers from the top-k chunks and --report writes a self-contained HTML report", async () => {
    const report = join(dir, "report.html");
    const run = await runCli(["ask", QUESTION, "--baseline", "topk:3", "--report", report, "--store", store, ...ENGINE, ...REQUEST]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Answer:\n/);
    expect(run.stdout).not.toMatch(/Attribution \(/);
    expect(run.stdout).toMatch(/Context: \S+#\d+, \S+#\d+, \S+#\d+\n/);
    const html = readFileSync(report, "utf8");
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(html).toMatch(/baseline run: no attribution/i);
    expect(html).not.toMatch(/<script/i);
  });

  it("cli ask - --model takes a model-cache name (ATTR_RAG_MODELS), with or without .gguf", async () => {
    const cache = join(dir, "cache");
    mkdirSync(cache, { recursive: true });
    copyFileSync(TEST_MODEL, join(cache, "story-model.gguf"));
    const args = ["ask", QUESTION, "--json", "--store", store, "--context-size", "16384", "--sequences", "4", "--k", "4", "--max-tokens", "8"];
    const byName = await runCli([...args, "--model", "story-model"], { ATTR_RAG_MODELS: cache });
    expect(byName.code, byName.stderr).toBe(0);
    const byPath = await runCli([...args, "--model", TEST_MODEL]);
    const finalOf = (out: string) => out.trim().split("\n").map((l) => AskEvent.fromJSON(JSON.parse(l))).find((e) => e.stage?.$case === "finalAnswer")?.stage?.value;
    expect(finalOf(byName.stdout)).toEqual(finalOf(byPath.stdout));
    expect(finalOf(byName.stdout)).toBeDefined();
    const unknown = await runCli([...args, "--model", "llama-70b"], { ATTR_RAG_MODELS: cache });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`no model "llama-70b": not a file here and not a name in the model cache ${cache}; cached: story-model.gguf.`);
    expect(unknown.stderr).toMatch(/attr-rag models pull/);
  });

  it("cli attribute - given sets, a coalition method embedded and through --server gives the same table; bad files are usage errors", async () => {
    const sets = join(dir, "sets.jsonl");
    writeFileSync(sets, ['{"id":"a","text":"Lily had a red ball and a small dog named Max."}', '{"id":"b","text":"Tom found a big box under the old tree."}', '{"text":"It started to rain, so they ran inside."}'].join("\n"));
    const args = ["attribute", "What did Lily have?", "--sets", sets, "--method", "shapley", "--max-tokens", "12"];
    const local = await runCli([...args, "--store", store, ...ENGINE, "--json"]);
    expect(local.code, local.stderr).toBe(0);
    const response = JSON.parse(local.stdout);
    expect(response.attribution.method).toBe("ATTRIBUTION_METHOD_SHAPLEY_EXACT");
    expect(response.attribution.rows.map((r: { setId: string }) => r.setId)).toEqual(["a", "b", "2"]);
    expect(response.attribution.evaluations).toBe(8);
    const server = await startServer(["serve", "--store", store, ...ENGINE, "--port", "0"]);
    try {
      const remote = await runCli([...args, "--server", server.address, "--json"]);
      expect(remote.code, remote.stderr).toBe(0);
      expect(JSON.parse(remote.stdout).attribution).toEqual(response.attribution);
      const text = await runCli([...args, "--server", server.address]);
      expect(text.stdout).toMatch(/Attribution \(α = the set's shapley exact value of v\(C\)/);
      // Past the command's own checks (a positive integer), the server names its limit.
      const limit = await runCli(["attribute", "q?", "--sets", sets, "--method", "kernel-shap", "--samples", "70000", "--server", server.address]);
      expect([limit.code, limit.stderr]).toEqual([2, expect.stringMatching(/samples must be an integer in \[1, 65536\]/)]);
    } finally {
      await server.stop();
    }
    const method = await runCli(["attribute", "q?", "--sets", sets, "--method", "magic"]);
    expect([method.code, method.stderr]).toEqual([2, expect.stringMatching(/--method must be one of occlusion, leave-one-out, shapley/)]);
    writeFileSync(sets, "not json\n");
    const bad = await runCli(["attribute", "q?", "--sets", sets, "--store", store, ...ENGINE]);
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringMatching(/line 1 is not valid JSON/)]);
  });

  it("cli ask - bad input is a usage error (exit 2) that says what to change", async () => {
    const cases: [string[], RegExp][] = [
      [["ask", QUESTION, "--store", store, "--model", join(dir, "missing.gguf")], /missing\.gguf/],
      [["ask", QUESTION, "--store", join(dir, "no-store"), ...ENGINE], /no-store/],
      [["ask", QUESTION, "--store", store], /no model configured: pass --model, set ATTR_RAG_MODEL/],
      [["ask", "   ", "--store", store, ...ENGINE], /question is empty/],
      [["ask", QUESTION, "--baseline", "best:3", "--store", store, ...ENGINE], /--baseline must be none, topk\[:K\] or rerank\[:K\]/],
      [["ask", QUESTION, "--k", "0", "--store", store, ...ENGINE], /--k must be a positive integer/],
      [["ask", QUESTION, "--k", "1000000", "--store", store, ...ENGINE], /retrieval\.k must be 1\.\.200/],
      [["ask", QUESTION, "--mode", "fuzzy", "--store", store, ...ENGINE], /--mode must be one of dense, bm25, hybrid/],
      [["ask", QUESTION, "--sequences", "1", "--store", store, ...ENGINE.slice(0, 2)], /sequences must be an integer in 2\.\.256/],
    ];
    for (const [args, message] of cases) {
      const run = await runCli(args);
      expect(run.stderr, args.join(" ")).toMatch(message);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr).not.toMatch(/unexpected error|at .*\.js:\d+/);
    }
  });

  it("cli serve - an unknown model path or a missing store exits 2 before listening", async () => {
    const noModel = await runCli(["serve", "--store", store, "--model", join(dir, "nope.gguf"), "--port", "0"]);
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toMatch(/nope\.gguf/);
    expect(noModel.stdout).not.toMatch(/listening/);
    const noStore = await runCli(["serve", "--store", join(dir, "nothing"), ...ENGINE, "--port", "0"]);
    expect(noStore.code).toBe(2);
    const badTls = await runCli(["serve", "--store", store, ...ENGINE, "--tls-cert", join(dir, "c.pem")]);
    expect(badTls.code).toBe(2);
    expect(badTls.stderr).toMatch(/both tlsCert and tlsKey/);
  });

  it("cli demo - ingests the demo corpus and answers the demo question end to end", async () => {
    const demoStore = join(dir, "demo-store");
    const report = join(dir, "demo.html");
    // No model named: the demo runs the one that ships with the repository.
    const run = await runCli(["demo", "--store", demoStore, "--report", report, "--max-tokens", "12"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`with ${join(REPO_ROOT, "examples/models/stories260K.gguf")}`);
    expect(run.stderr).toMatch(/demo: 32 documents/);
    expect(run.stderr).toMatch(/selected: kept \d+ of \d+ sets/);
    expect(run.stdout).toMatch(/^Answer:\n/);
    expect(existsSync(report)).toBe(true);
    // ATTR_RAG_MODEL may name a model in the cache.
    const cache = join(dir, "demo-cache");
    mkdirSync(cache);
    copyFileSync(TEST_MODEL, join(cache, "cached-story.gguf"));
    const again = await runCli(["demo", "--store", demoStore, "--report", report, "--max-tokens", "8"], { ATTR_RAG_MODEL: "cached-story", ATTR_RAG_MODELS: cache });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`with ${join(cache, "cached-story.gguf")}`);
    expect(again.stderr).toMatch(/\(0 chunks embedded now\)/);
  });
});
