import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AskRequest, BatchState } from "@attr-rag/contracts";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime, startGatewayServer, type GatewayServerHandle } from "../src/index.js";
import { BatchClient } from "./helpers/batchClient.js";
import { curl } from "./helpers/curl.js";
import { buildDemoStore, QUESTION, testConfig } from "./helpers/demoStore.js";
import { until } from "./helpers/until.js";

const TOKEN = "download-test-token";
const AUTH = { authorization: `Bearer ${TOKEN}` };

/** The system's curl with these arguments: its exit code and stderr (the body goes where -o says). */
function runCurl(args: readonly string[]): Promise<{ code: number; stderr: string; stdout: string }> {
  return new Promise((resolve) =>
    execFile("curl", ["-sS", "-H", `Authorization: Bearer ${TOKEN}`, ...args], { encoding: "utf8" }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr, stdout }),
    ),
  );
}

describe("batch results over plain HTTP (GET /v1/batches/{id}/results.jsonl)", () => {
  let store: Awaited<ReturnType<typeof buildDemoStore>>;
  let runtime: Runtime;
  let server: GatewayServerHandle;
  let batches: BatchClient;
  let base: string;
  const dir = mkdtempSync(join(tmpdir(), "attr-rag-download-"));

  beforeAll(async () => {
    store = await buildDemoStore();
    runtime = await Runtime.open(testConfig(store.dir, { authToken: TOKEN, batchConcurrency: 1 }));
    server = await startGatewayServer({ runtime, httpPort: 0, log: () => {} });
    base = `http://${server.http!.address}`;
    batches = new BatchClient(server.address, TOKEN);
  });

  afterAll(async () => {
    batches?.close();
    await server?.close();
    store?.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  it("download - curl gets a running batch's results, is cut mid-stream, resumes with -C -: the file equals one full download after the batch ends", async () => {
    const items = Array.from({ length: 6 }, (_, i) => ({ itemId: `q-${i}`, request: AskRequest.fromPartial({ question: `${QUESTION} (${i})`, retrieval: { k: 3 }, generation: { maxTokens: 8 }, attribution: { sentences: false } }) }));
    await batches.create({ batchId: "dl", items });
    const url = `${base}/v1/batches/dl/results.jsonl`;
    await until(async () => (await batches.results("dl")).results.length >= 2, "two results", 120_000);
    const running = await batches.get("dl");
    expect(running.state).not.toBe(BatchState.BATCH_STATE_COMPLETED);

    // What the batch has so far, then the connection drops in the middle of its last line: the file a cut
    // download leaves (the bytes arrive too fast to cut a real transfer at a chosen point).
    const part = join(dir, "part.jsonl");
    const first = await runCurl(["-o", part, url]);
    expect(first.code, first.stderr).toBe(0);
    const snapshot = readFileSync(part);
    const lastLine = snapshot.subarray(0, -1).lastIndexOf(0x0a) + 1;
    const cutAt = lastLine + Math.floor((snapshot.length - lastLine) / 2);
    truncateSync(part, cutAt);
    expect(statSync(part).size).toBe(cutAt);

    await until(async () => (await batches.get("dl")).state === BatchState.BATCH_STATE_COMPLETED, "the batch ends", 240_000);
    const resumed = await runCurl(["-C", "-", "-o", part, url]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const full = join(dir, "full.jsonl");
    expect((await runCurl(["-o", full, url])).code).toBe(0);
    expect(readFileSync(part).equals(readFileSync(full))).toBe(true);
    const lines = readFileSync(full, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { id: string; status: string });
    expect(lines.map((l) => l.id).sort()).toEqual(items.map((i) => i.itemId).sort());
    expect(lines.every((l) => l.status === "ok")).toBe(true);
  });

  it("download - the bearer token, ETag and 304, a Range past the end (416), HEAD, formats, unknown batches", async () => {
    const url = `${base}/v1/batches/dl/results.jsonl`;
    await until(async () => (await batches.get("dl")).state === BatchState.BATCH_STATE_COMPLETED, "the batch ends", 240_000);
    const whole = await curl(url, { method: "GET", headers: AUTH });
    expect(whole.status).toBe(200);
    expect(whole.contentType).toBe("application/jsonl; charset=utf-8");
    expect((await curl(url, { method: "GET" })).status).toBe(401);
    expect((await curl(url, { method: "GET", headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    // HEAD: the length and ETag without the body; the same ETag gets 304.
    const head = await runCurl(["-I", url]);
    const etag = /^etag: (.*)$/im.exec(head.stdout)![1]!.trim();
    expect(head.stdout).toMatch(new RegExp(`content-length: ${whole.body.length}`, "i"));
    expect(head.stdout).toMatch(/x-batch-state: ended/i);
    expect((await curl(url, { method: "GET", headers: { ...AUTH, "if-none-match": etag } })).status).toBe(304);
    // A range: exactly those bytes; past the end: 416 with the length.
    const middle = await curl(url, { method: "GET", headers: { ...AUTH, range: "bytes=10-49" } });
    expect(middle.status).toBe(206);
    expect(middle.body.equals(whole.body.subarray(10, 50))).toBe(true);
    const past = await runCurl(["-i", "-H", `Range: bytes=${whole.body.length}-`, url]);
    expect(past.stdout).toMatch(/^HTTP\/1\.1 416/);
    expect(past.stdout).toMatch(new RegExp(`content-range: bytes \\*/${whole.body.length}`, "i"));
    // The OpenAI shape over the same route: one line per item, custom_id the item id.
    const openai = await curl(`${url}?format=openai`, { method: "GET", headers: AUTH });
    expect(openai.status).toBe(200);
    const lines = openai.body.toString("utf8").trim().split("\n").map((l) => JSON.parse(l) as { custom_id: string; response: { status_code: number; body: { id: string } } });
    expect(lines.map((l) => l.custom_id)).toEqual(whole.body.toString("utf8").trim().split("\n").map((l) => (JSON.parse(l) as { id: string }).id));
    expect(lines.every((l) => l.response.status_code === 200 && l.response.body.id === l.custom_id)).toBe(true);
    expect((await curl(`${url}?format=csv`, { method: "GET", headers: AUTH })).status).toBe(400);
    expect((await curl(`${base}/v1/batches/nope/results.jsonl`, { method: "GET", headers: AUTH })).status).toBe(404);
    expect((await curl(url, { method: "POST", headers: AUTH, body: "x" })).status).toBe(405);
  });

  it("download - If-None-Match with *, a list or a weak tag gives 304; an invalid Range or another unit is ignored (200, whole); only a well-formed unsatisfiable one is 416", async () => {
    const url = `${base}/v1/batches/dl/results.jsonl`;
    await until(async () => (await batches.get("dl")).state === BatchState.BATCH_STATE_COMPLETED, "the batch ends", 240_000);
    const whole = await curl(url, { method: "GET", headers: AUTH });
    const etag = /^etag: (.*)$/im.exec((await runCurl(["-I", url])).stdout)![1]!.trim();
    const status = async (headers: Record<string, string>, method = "GET") => (await curl(url, { method, headers: { ...AUTH, ...headers }, ...(method === "HEAD" ? { args: ["-I"] } : {}) })).status;
    for (const match of ["*", `"other", ${etag}`, `W/"other",W/${etag}`, `W/${etag}`]) {
      expect(await status({ "if-none-match": match }), match).toBe(304);
      expect(await status({ "if-none-match": match }, "HEAD"), `HEAD ${match}`).toBe(304);
    }
    expect(await status({ "if-none-match": `"other", W/"else"` })).toBe(200);
    // Invalid (last before first, no digits, junk, another unit) or several ranges: the whole file, 200.
    for (const range of ["bytes=50-10", "bytes=-", "bytes=abc", "bytes=0-1,x", "items=0-5", "bytes 0-5", "bytes=0-1,5-6"]) {
      const reply = await curl(url, { method: "GET", headers: { ...AUTH, range } });
      expect(reply.status, range).toBe(200);
      expect(reply.body.equals(whole.body), range).toBe(true);
    }
    // Well-formed: a suffix is the last bytes; past the end (or a zero suffix, or every range of a list) is 416.
    const tail = await curl(url, { method: "GET", headers: { ...AUTH, range: "bytes=-20" } });
    expect(tail.status).toBe(206);
    expect(tail.body.equals(whole.body.subarray(-20))).toBe(true);
    for (const range of [`bytes=${whole.body.length}-`, "bytes=-0", `bytes=${whole.body.length}-,${whole.body.length + 5}-${whole.body.length + 9}`]) {
      expect(await status({ range }), range).toBe(416);
    }
    // A weak If-Range never lets the Range stand (strong comparison): the whole file.
    expect(await status({ range: "bytes=0-9", "if-range": `W/${etag}` })).toBe(200);
    expect(await status({ range: "bytes=0-9", "if-range": etag })).toBe(206);
  });

  it("download - results fewer than the batch recorded (one removed from batches.sqlite): 410 Gone saying why, for GET and HEAD, never a shorter file", async () => {
    const url = `${base}/v1/batches/dl/results.jsonl`;
    await until(async () => (await batches.get("dl")).state === BatchState.BATCH_STATE_COMPLETED, "the batch ends", 240_000);
    expect((await curl(url, { method: "GET", headers: AUTH })).status).toBe(200);
    // As if the first result had expired while the batch's record lived on: the record still counts it.
    const db = new Database(join(store.dir, "batches.sqlite"));
    try {
      db.pragma("busy_timeout = 5000");
      expect(db.prepare("DELETE FROM results WHERE batch_id = 'dl' AND pos = 0").run().changes).toBe(1);
    } finally {
      db.close();
    }
    const gone = await curl(url, { method: "GET", headers: AUTH });
    expect(gone.status).toBe(410);
    expect(JSON.parse(gone.body.toString("utf8")).message).toMatch(/1 of the 6 results batch dl recorded are no longer kept .*cannot be served whole or resumed/);
    expect((await curl(url, { method: "GET", headers: { ...AUTH, range: "bytes=100-" } })).status).toBe(410);
    expect((await curl(url, { method: "HEAD", headers: AUTH, args: ["-I"] })).status).toBe(410);
  });
});
