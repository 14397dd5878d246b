import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BatchItemState, BatchState, type BatchItemResult } from "@attr-rag/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RemoteBatches } from "@attr-rag/gateway";
import { allResults, QUESTIONS, rowsFile, until } from "./helpers/batches.js";
import { cleanEnv, ingestDemoCorpus, MAIN, REPO_ROOT, runCli, startServer, TEST_MODEL } from "./helpers/runCli.js";
import { webhookReceiver } from "./helpers/webhookReceiver.js";

const dir = mkdtempSync(join(tmpdir(), "attr-rag-batch-cli-"));
const store = join(dir, "store");
const ENGINE = ["--context-size", "16384", "--sequences", "4", "--threads", "1"];

const lines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as { id: string; status: string; answer: string; timings: Record<string, number> });

beforeAll(async () => {
  const ingest = await ingestDemoCorpus(store);
  expect(ingest.code, ingest.stderr).toBe(0);
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("attr-rag batch (embedded gateway, batches.sqlite)", () => {
  it("batch - a bad row names its file, line and field, and nothing is submitted", async () => {
    const server = await startServer(["serve", "--store", store, "--model", TEST_MODEL, "--port", "0", ...ENGINE]);
    try {
      const cases: [string, RegExp][] = [
        ['{"id": "a", "question": "q"}\n{"id": "b", "question": "q", "k": 0}\n', /:2: field "k": must be a positive integer, got "0"; nothing was submitted/],
        ['{"id": "a", "question": "q"}\n{"id": "a", "question": "q2"}\n', /:2: field "id": "a" is already the id of line 1/],
        ['{"id": "a", "question": "q", "method": "magic"}\n', /:1: field "method": must be one of occlusion, .*got "magic"/],
        ['{"id": "a", "question": "q", "temperature": 1}\n', /:1: unknown field "temperature"/],
        ['{"id": "a"}\n', /:1: field "question" must be a string, got nothing/],
        ['{"id": "a", "question": "q"\n', /:1: not valid JSON/],
        ['{"question": "q"}\n', /:1: field "id" must be a non-empty string/],
      ];
      for (const [text, message] of cases) {
        const file = join(dir, "bad.jsonl");
        writeFileSync(file, text);
        const run = await runCli(["batch", "submit", file, "--server", server.address, "--id", "never"]);
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toMatch(message);
      }
      const status = await runCli(["batch", "status", "never", "--server", server.address]);
      expect(status.code).toBe(2);
      expect(status.stderr).toMatch(/NOT_FOUND: no batch never/);
      // Flags given to batch submit are every row's defaults; a row's own field wins.
      writeFileSync(join(dir, "defaults.jsonl"), '{"id": "d1", "question": "How do I collect oxygen gas over water?"}\n{"id": "d2", "question": "How do I collect oxygen gas over water?", "max_tokens": 3}\n');
      const run = await runCli(["batch", "submit", join(dir, "defaults.jsonl"), "--server", server.address, "--id", "defaults", "--max-tokens", "5", "--k", "2", "--wait", "--out", join(dir, "defaults.out.jsonl")]);
      expect(run.code, run.stderr).toBe(0);
      const rows = lines(join(dir, "defaults.out.jsonl")) as unknown as { id: string; status: string; answer: string; kept_sets: unknown[]; attribution: { rows: unknown[] }; sentences: { set_ids: string[]; sentences: { text: string; drops: number[] }[] } }[];
      expect(rows.map((r) => r.id).sort()).toEqual(["d1", "d2"]);
      for (const r of rows) {
        expect(r.status).toBe("ok");
        expect(r.kept_sets.length).toBeGreaterThanOrEqual(1);
        expect(r.attribution.rows.length).toBeLessThanOrEqual(2); // --k 2: at most two sets
        // Rows carry sentence-level attribution of the answer against its blocks.
        expect(r.answer.trim()).not.toBe("");
        expect(r.sentences.sentences.length).toBeGreaterThan(0);
        for (const s of r.sentences.sentences) {
          expect(r.answer).toContain(s.text);
          expect(s.drops).toHaveLength(r.sentences.set_ids.length);
        }
      }
    } finally {
      await server.stop();
    }
  });

  it("batch - kill -9 of the gateway mid-batch and a restart on the same state dir: the batch finishes, each item has exactly one result, none that had finished ran again", async () => {
    const rows = rowsFile(dir, "crash", 12, { max_tokens: 8, k: 4 });
    const serveArgs = ["serve", "--store", store, "--model", TEST_MODEL, "--port", "0", ...ENGINE];
    const first = await startServer(serveArgs);
    const submitted = await runCli(["batch", "submit", rows, "--server", first.address, "--id", "crash-12"]);
    expect(submitted.code, submitted.stderr).toBe(0);
    let batches = new RemoteBatches({ server: first.address });
    await until(async () => ((await batches.get("crash-12")).counts!.succeeded >= 5 ? true : undefined), "5 results");
    const before = await allResults(batches, "crash-12");
    batches.close();
    first.child.kill("SIGKILL");
    await new Promise((r) => first.child.once("exit", r));
    expect(existsSync(join(store, "batches.sqlite"))).toBe(true);

    const second = await startServer(serveArgs);
    batches = new RemoteBatches({ server: second.address });
    try {
      const end = await until(async () => {
        const b = await batches.get("crash-12");
        return b.state === BatchState.BATCH_STATE_COMPLETED ? b : undefined;
      }, "the batch to finish after the restart");
      expect(end.counts).toEqual({ queued: 0, running: 0, succeeded: 12, failed: 0, cancelled: 0 });
      const after = await allResults(batches, "crash-12");
      expect(after.map((r) => r.itemId).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `crash-${i}`).sort());
      // Recorded before the kill: byte for byte the same results (same request ids, same finish times), run once.
      expect(after.slice(0, before.length)).toEqual(before);
      for (const r of before) expect(r.attempts).toBe(1);
      // The item that was running at the kill started again; nothing else did.
      const again = after.filter((r) => r.attempts > 1);
      expect(again.length).toBeLessThanOrEqual(1);
      expect(after.every((r) => r.state === BatchItemState.BATCH_ITEM_STATE_SUCCEEDED)).toBe(true);

      // batch results resumes a partial file and never writes an item twice, even after a torn last line.
      const out = join(dir, "crash.out.jsonl");
      const partial = after.slice(0, 7).map((r) => JSON.stringify({ id: r.itemId, question: r.question, status: "ok" }));
      writeFileSync(out, partial.join("\n") + "\n");
      appendFileSync(out, '{"id": "crash-torn", "quest');
      const read = await runCli(["batch", "results", "crash-12", "--server", second.address, "--out", out]);
      expect(read.code, read.stderr).toBe(0);
      expect(read.stderr).toMatch(/5 results written to .* \(7 were there already\); batch crash-12 completed, 12\/12 done/);
      const written = lines(out);
      expect(written.map((r) => r.id)).toEqual(after.map((r) => r.itemId));
      const again2 = await runCli(["batch", "results", "crash-12", "--server", second.address, "--out", out]);
      expect(again2.stderr).toMatch(/0 results written/);
      expect(lines(out)).toHaveLength(12);
      const listed = await runCli(["batch", "list", "--server", second.address, "--json"]);
      expect(listed.code, listed.stderr).toBe(0);
      const entry = listed.stdout.trim().split("\n").map((l) => JSON.parse(l) as { id: string; state: string; succeeded: number }).find((b) => b.id === "crash-12");
      expect(entry).toMatchObject({ state: "completed", succeeded: 12 });
      const watched = await runCli(["batch", "watch", "crash-12", "--server", second.address]);
      expect(watched.code, watched.stderr).toBe(0);
      expect(watched.stdout).toMatch(/^crash-12  completed  12\/12 done/m);
    } finally {
      batches.close();
      await second.stop();
    }
  });

  it("batch - kill -9 of the gateway right after a batch ends: its webhook event is still delivered after the restart, once", async () => {
    let up = false;
    const receiver = await webhookReceiver(() => (up ? 200 : 503));
    const { deliveries, url: hook } = receiver;
    const secretFile = join(dir, "webhook.secret");
    writeFileSync(secretFile, `whsec_${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
    const serveArgs = ["serve", "--store", store, "--model", TEST_MODEL, "--port", "0", "--webhook-secret-file", secretFile, "--webhook-allowed-hosts", "127.0.0.1", "--webhook-backoff-ms", "200", ...ENGINE];
    let first = await startServer(serveArgs);
    try {
      const rows = rowsFile(dir, "hooked", 2, { max_tokens: 3, k: 2, sentences: false });
      const submitted = await runCli(["batch", "submit", rows, "--server", first.address, "--id", "hooked", "--webhook-url", hook, "--wait"]);
      expect(submitted.code, submitted.stderr).toBe(0);
      // The batch has ended; its receiver refuses for now. Kill the gateway without a chance to do anything more.
      await until(async () => (deliveries.length >= 1 ? true : undefined), "a first (refused) delivery", 30_000);
      first.child.kill("SIGKILL");
      await new Promise((r) => first.child.once("exit", r));
      const refused = deliveries.length;
      up = true;
      first = await startServer(serveArgs);
      await until(async () => (deliveries.some((d) => d.answered === 200) ? true : undefined), "delivered after the restart", 60_000);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(deliveries.slice(refused).map((d) => d.answered)).toEqual([200]);
      expect(new Set(deliveries.map((d) => d.id))).toEqual(new Set(["evt_batch_hooked_ended"]));
      // batch status says so: every attempt counted, across the restart.
      const shown = await runCli(["batch", "status", "hooked", "--server", first.address, "--json"]);
      expect(shown.code, shown.stderr).toBe(0);
      expect(JSON.parse(shown.stdout).webhook).toMatchObject({ url: hook, state: "delivered", attempts: deliveries.length, last_error: "" });
      const plain = await runCli(["batch", "status", "hooked", "--server", first.address]);
      expect(plain.stdout).toContain(`webhook delivered (${deliveries.length} attempts)`);
    } finally {
      await first.stop();
      receiver.close();
    }
  });

  it("batch - the same 10 questions as an OpenAI-shaped file and as our rows give the same answers; --format openai writes OpenAI Batch output lines", async () => {
    const ours = rowsFile(dir, "ours10", 10, { max_tokens: 3, k: 2, sentences: false });
    const openai = join(dir, "openai10.jsonl");
    writeFileSync(
      openai,
      readFileSync(ours, "utf8")
        .trim()
        .split("\n")
        .map((l) => {
          const { id, ...body } = JSON.parse(l) as Record<string, unknown>;
          return JSON.stringify({ custom_id: id, method: "POST", url: "/v1/ask", body });
        })
        .join("\n") + "\n",
    );
    const run = async (file: string, id: string, format: string) => {
      const out = join(dir, `${id}.out.jsonl`);
      const r = await runCli(["batch", "run", file, "--id", id, "--format", format, "--store", store, "--model", TEST_MODEL, "--out", out, ...ENGINE]);
      expect(r.code, r.stderr).toBe(0);
      return readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    };
    const rows = await run(ours, "rows-10", "rows");
    const lines = await run(openai, "openai-10", "openai");
    expect(lines).toHaveLength(10);
    const answers = new Map(rows.map((r) => [r.id as string, r.answer as string]));
    for (const line of lines) {
      // The OpenAI Batch output fields, one by one.
      expect(Object.keys(line).sort()).toEqual(["custom_id", "error", "id", "response"]);
      expect(line.id).toMatch(/^batch_req_openai-10_\d+$/);
      const response = line.response as { status_code: number; request_id: string; body: { id: string; answer: string; status: string } };
      expect(Object.keys(response).sort()).toEqual(["body", "request_id", "status_code"]);
      expect(response.status_code).toBe(200);
      expect(response.request_id).not.toBe("");
      expect(line.error).toBeNull();
      expect(response.body.id).toBe(line.custom_id);
      expect(response.body.status).toBe("ok");
      expect(response.body.answer).toBe(answers.get(line.custom_id as string));
    }
    expect(new Set(lines.map((l) => l.custom_id))).toEqual(new Set(answers.keys()));
    // A results file holds one format: resuming it with the other is refused, naming the line.
    const mixed = await runCli(["batch", "run", ours, "--id", "rows-10", "--format", "openai", "--store", store, "--model", TEST_MODEL, "--out", join(dir, "rows-10.out.jsonl"), ...ENGINE]);
    expect(mixed.code).not.toBe(0);
    expect(mixed.stderr).toMatch(/line 1 is not a --format openai result line \(no "custom_id"\) \(it holds --format rows lines\)/);
  });

  it("batch - batch run (embedded, no server) stopped mid-way resumes with the same command: every row once, finished rows untouched", async () => {
    const rows = rowsFile(dir, "run", 6, { max_tokens: 6, k: 3 });
    const out = join(dir, "run.out.jsonl");
    const args = ["batch", "run", rows, "--store", store, "--model", TEST_MODEL, "--out", out, ...ENGINE];
    const child = spawn(process.execPath, [MAIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: cleanEnv() });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    await until(async () => (existsSync(out) && lines(out).length >= 2 ? true : undefined), "two rows written", 180_000);
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const firstRows = readFileSync(out, "utf8").split("\n").filter((l) => l !== "");
    expect(firstRows.length, stderr).toBeGreaterThanOrEqual(2);
    expect(firstRows.length).toBeLessThan(6);

    const resumed = await runCli(args);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/resuming, \d+ of 6 done/);
    expect(resumed.stderr).toMatch(/completed: .*6 ok.*; 6 results in/);
    const all = readFileSync(out, "utf8").split("\n").filter((l) => l !== "");
    expect(all.slice(0, firstRows.length)).toEqual(firstRows);
    expect(new Set(all.map((l) => (JSON.parse(l) as { id: string }).id)).size).toBe(6);
    expect(all).toHaveLength(6);
    // Run once more: nothing to do, nothing written.
    const third = await runCli(args);
    expect(third.code, third.stderr).toBe(0);
    expect(readFileSync(out, "utf8").split("\n").filter((l) => l !== "")).toEqual(all);
  });
});
