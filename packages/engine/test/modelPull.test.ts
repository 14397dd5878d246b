import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EngineArgumentError, ModelPullError } from "../src/errors.js";
import { parseModelSource } from "../src/models/modelSource.js";
import { pullModel, type PullProgress } from "../src/models/pullModel.js";
import { fakeGguf, startModelServer } from "./helpers/modelHttpServer.js";

const root = mkdtempSync(join(tmpdir(), "attr-rag-pull-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, `cache-${++dirs}`);

const MODEL = fakeGguf(3 * 1024 * 1024);
const SHA = createHash("sha256").update(MODEL).digest("hex");
const CUT = 1024 * 1024;

async function pullError(p: Promise<unknown>): Promise<ModelPullError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ModelPullError) return err;
    throw err;
  }
  throw new Error("expected the pull to fail");
}

/** What a reader of the directory sees: only complete models carry the .gguf name. */
const ggufs = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".gguf")) : []);

describe("models pull", () => {
  it("model pull - downloads into the directory with progress, checks size and sha256, then renames into place", async () => {
    await using server = await startModelServer({ "/models/m.gguf": MODEL });
    const dir = freshDir();
    const progress: PullProgress[] = [];
    const result = await pullModel({ source: server.url("/models/m.gguf"), dir, sha256: SHA.toUpperCase(), onProgress: (p) => progress.push(p) });
    expect(result).toMatchObject({ path: join(dir, "m.gguf"), name: "m.gguf", bytes: MODEL.length, sha256: SHA, resumedFrom: 0, alreadyPresent: false, verifiedBy: "--sha256" });
    expect(readFileSync(result.path).equals(MODEL)).toBe(true);
    expect(readdirSync(dir)).toEqual(["m.gguf"]);
    expect(progress.length).toBeGreaterThan(1);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!.received).toBeGreaterThan(progress[i - 1]!.received);
    expect(progress.at(-1)).toEqual({ received: MODEL.length, total: MODEL.length });
  });

  it("model pull - an interrupted transfer leaves only a .partial file, and the next pull resumes it with a Range request", async () => {
    await using server = await startModelServer({ "/models/m.gguf": MODEL }, { cutAfter: [CUT] });
    const dir = freshDir();
    const err = await pullError(pullModel({ source: server.url("/models/m.gguf"), dir, sha256: SHA }));
    expect(err.retryable).toBe(true);
    // The server sent CUT bytes; what reached the file is what arrived before the connection failed.
    const kept = statSync(join(dir, "m.gguf.partial")).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(CUT);
    expect(err.message).toMatch(new RegExp(`interrupted .*after ${kept} of ${MODEL.length} bytes; run the same command again to resume`));
    expect(ggufs(dir)).toEqual([]);

    const notes: string[] = [];
    const result = await pullModel({ source: server.url("/models/m.gguf"), dir, sha256: SHA, onNote: (l) => notes.push(l) });
    expect(server.requests.map((r) => [r.range, r.ifRange, r.status, r.bytesSent])).toEqual([
      [undefined, undefined, 200, CUT],
      [`bytes=${kept}-`, server.etagOf(MODEL), 206, MODEL.length - kept],
    ]);
    expect(result).toMatchObject({ resumedFrom: kept, bytes: MODEL.length, sha256: SHA });
    expect(notes).toContain(`resuming m.gguf at ${kept} bytes`);
    expect(readFileSync(result.path).equals(MODEL)).toBe(true);
    expect(readdirSync(dir)).toEqual(["m.gguf"]);
  });

  it("model pull - a server without Range support: the retry starts over, says so, and still ends whole", async () => {
    await using server = await startModelServer({ "/models/m.gguf": MODEL }, { ranges: false, cutAfter: [CUT] });
    const dir = freshDir();
    await pullError(pullModel({ source: server.url("/models/m.gguf"), dir }));
    const kept = statSync(join(dir, "m.gguf.partial")).size;
    const notes: string[] = [];
    const result = await pullModel({ source: server.url("/models/m.gguf"), dir, onNote: (l) => notes.push(l) });
    expect(server.requests.map((r) => [r.range, r.status])).toEqual([
      [undefined, 200],
      [`bytes=${kept}-`, 200],
    ]);
    expect(notes.join("\n")).toMatch(/does not resume downloads .*downloading from the start/);
    expect(result).toMatchObject({ resumedFrom: 0, bytes: MODEL.length, sha256: SHA, verifiedBy: "none" });
    expect(readFileSync(result.path).equals(MODEL)).toBe(true);
  });

  it("model pull - a wrong checksum is refused and nothing is kept, not even the partial file", async () => {
    await using server = await startModelServer({ "/models/m.gguf": MODEL });
    const dir = freshDir();
    const wrong = "0".repeat(64);
    const err = await pullError(pullModel({ source: server.url("/models/m.gguf"), dir, sha256: wrong }));
    expect(err.retryable).toBe(false);
    expect(err.message).toBe(`sha256 mismatch for m.gguf: expected ${wrong} (--sha256), got ${SHA}; the download was deleted`);
    expect(readdirSync(dir)).toEqual([]);
    await expect(pullModel({ source: server.url("/models/m.gguf"), dir, sha256: "abc" })).rejects.toThrow(/--sha256 must be 64 hex digits/);
  });

  it("model pull - 404, a page that is not a GGUF and an unreachable host are clear errors that leave no model file", async () => {
    await using server = await startModelServer({ "/models/page.gguf": Buffer.from("<html>Sign in to download</html>") });
    const dir = freshDir();
    const missing = await pullError(pullModel({ source: server.url("/models/nope.gguf"), dir }));
    expect(missing.message).toBe(`HTTP 404 Not Found from ${server.url("/models/nope.gguf")}: no such file; check the URL`);
    expect(missing.retryable).toBe(false);
    const page = await pullError(pullModel({ source: server.url("/models/page.gguf"), dir }));
    expect(page.message).toMatch(/sent 32 bytes that are not a GGUF file \(they start with "<htm"\).*Nothing was kept/);

    // A port nobody listens on: take a free one and close it again.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const offline = await pullError(pullModel({ source: `http://127.0.0.1:${port}/m.gguf`, dir }));
    expect(offline.message).toBe(`127.0.0.1:${port} refused the connection`);
    expect(offline.retryable).toBe(true);
    const unresolvable = await pullError(pullModel({ source: "http://no-such-host.invalid/m.gguf", dir }));
    expect(unresolvable.message).toMatch(/cannot resolve no-such-host\.invalid \(offline, or no DNS\?\)/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("model pull - hf: sources follow the hub's redirect to its CDN, send HF_TOKEN to the hub only, and are checked against the hub's sha256", async () => {
    const body = fakeGguf(200_000, 7);
    const sha = createHash("sha256").update(body).digest("hex");
    const env = (origin: string) => ({ HF_ENDPOINT: `${origin}/hub`, HF_TOKEN: "hf_secret" });
    {
      // As on huggingface.co: the sha256 comes on the hub's 302, the bytes from another origin.
      await using cdn = await startModelServer({ "/cdn/sub/q4.gguf": body });
      await using hub = await startModelServer({}, { linkedSha256: sha, cdnOrigin: cdn.origin });
      const result = await pullModel({ source: "hf:acme/tiny-GGUF/sub/q4.gguf", dir: freshDir(), env: env(hub.origin) });
      expect(result).toMatchObject({ name: "q4.gguf", sha256: sha, verifiedBy: "hub", url: `${hub.origin}/hub/acme/tiny-GGUF/resolve/main/sub/q4.gguf` });
      expect(hub.requests.map((r) => [r.path, r.status, r.authorization])).toEqual([["/hub/acme/tiny-GGUF/resolve/main/sub/q4.gguf", 302, "Bearer hf_secret"]]);
      expect(cdn.requests.map((r) => [r.path, r.status, r.authorization])).toEqual([["/cdn/sub/q4.gguf", 200, undefined]]);
    }
    {
      await using server = await startModelServer({ "/cdn/q4.gguf": body }, { linkedSha256: "f".repeat(64) });
      const dir = freshDir();
      const err = await pullError(pullModel({ source: "hf:acme/tiny-GGUF/q4.gguf", dir, env: env(server.origin) }));
      expect(err.message).toMatch(/sha256 mismatch for q4\.gguf: expected f{64} \(the hub's X-Linked-ETag\)/);
      expect(readdirSync(dir)).toEqual([]);
      const gone = await pullError(pullModel({ source: "hf:acme/tiny-GGUF/other.gguf", dir, env: env(server.origin) }));
      expect(gone.message).toMatch(/HTTP 404 .*check the owner, repository and file name on the hub/);
    }
  });

  it("model pull - a partial file that is already whole is finished from the server's 416, without downloading again", async () => {
    await using server = await startModelServer({ "/models/m.gguf": MODEL }, { cutAfter: [MODEL.length - 1] });
    const dir = freshDir();
    await pullError(pullModel({ source: server.url("/models/m.gguf"), dir }));
    // The last byte (and whatever else the failed connection lost) put in by hand, as if the transfer had
    // ended right after writing it.
    appendFileSync(join(dir, "m.gguf.partial"), MODEL.subarray(statSync(join(dir, "m.gguf.partial")).size));
    const result = await pullModel({ source: server.url("/models/m.gguf"), dir, sha256: SHA });
    expect(server.requests.map((r) => [r.range, r.status, r.bytesSent])).toEqual([
      [undefined, 200, MODEL.length - 1],
      [`bytes=${MODEL.length}-`, 416, 0],
    ]);
    expect(result).toMatchObject({ resumedFrom: MODEL.length, bytes: MODEL.length, sha256: SHA });
  });

  it("model pull - a file that changed on the server is never stitched to the old prefix, even when the server ignores If-Range", async () => {
    const files = { "/models/m.gguf": MODEL };
    const changed = fakeGguf(MODEL.length, 99);
    for (const ignoreIfRange of [false, true]) {
      files["/models/m.gguf"] = MODEL;
      await using server = await startModelServer(files, { cutAfter: [CUT], ignoreIfRange });
      const dir = freshDir();
      await pullError(pullModel({ source: server.url("/models/m.gguf"), dir }));
      files["/models/m.gguf"] = changed;
      const notes: string[] = [];
      const result = await pullModel({ source: server.url("/models/m.gguf"), dir, onNote: (l) => notes.push(l) });
      expect(readFileSync(result.path).equals(changed), `ignoreIfRange ${ignoreIfRange}`).toBe(true);
      expect(result.resumedFrom).toBe(0);
      expect(notes.join("\n")).toMatch(ignoreIfRange ? /m\.gguf changed on .* since the partial download; downloading from the start/ : /does not resume downloads/);
    }
  });

  it("model pull - without a validator or a checksum a partial file is not trusted; with --sha256 it is resumed", async () => {
    await using server = await startModelServer({ "/models/m.gguf": MODEL }, { cutAfter: [CUT, undefined, CUT], noValidators: true });
    const dir = freshDir();
    await pullError(pullModel({ source: server.url("/models/m.gguf"), dir }));
    const notes: string[] = [];
    await pullModel({ source: server.url("/models/m.gguf"), dir, onNote: (l) => notes.push(l) });
    expect(notes[0]).toMatch(/cannot tell whether m\.gguf changed .* \(no ETag or Last-Modified, and no checksum to check\); downloading from the start/);
    expect(server.requests[1]!.range).toBeUndefined();

    const other = freshDir();
    await pullError(pullModel({ source: server.url("/models/m.gguf"), dir: other, sha256: SHA }));
    const resumed = await pullModel({ source: server.url("/models/m.gguf"), dir: other, sha256: SHA });
    expect(resumed).toMatchObject({ resumedFrom: CUT, sha256: SHA });
    expect(server.requests.at(-1)!.range).toBe(`bytes=${CUT}-`);
  });

  it("model pull - an aborted pull keeps its partial file for the next run; two pulls of one file at once are refused", async () => {
    await using server = await startModelServer({ "/models/m.gguf": MODEL });
    const dir = freshDir();
    const controller = new AbortController();
    const err = await pullError(
      pullModel({ source: server.url("/models/m.gguf"), dir, signal: controller.signal, onProgress: (p) => p.received > CUT && controller.abort() }),
    );
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/was interrupted after \d+ of \d+ bytes; run the same command again to resume/);
    expect(ggufs(dir)).toEqual([]);
    const kept = statSync(join(dir, "m.gguf.partial")).size;
    expect(kept).toBeGreaterThan(CUT);

    const first = pullModel({ source: server.url("/models/m.gguf"), dir });
    await expect(pullModel({ source: server.url("/models/m.gguf"), dir })).rejects.toThrow(/another pull of m\.gguf is running \(pid \d+\)/);
    expect((await first).resumedFrom).toBe(kept);
    expect(readdirSync(dir)).toEqual(["m.gguf"]);
  });

  it("model pull - a file already there is not fetched again unless forced; a different checksum is refused", async () => {
    await using server = await startModelServer({ "/models/m.gguf": MODEL });
    const dir = freshDir();
    await pullModel({ source: server.url("/models/m.gguf"), dir });
    const again = await pullModel({ source: server.url("/models/m.gguf"), dir, sha256: SHA });
    expect(again).toMatchObject({ alreadyPresent: true, sha256: SHA });
    expect(server.requests).toHaveLength(1);
    await expect(pullModel({ source: server.url("/models/m.gguf"), dir, sha256: "1".repeat(64) })).rejects.toThrow(/already exists with sha256 .*pass --force/);
    const forced = await pullModel({ source: server.url("/models/m.gguf"), dir, force: true });
    expect(forced.alreadyPresent).toBe(false);
    expect(server.requests).toHaveLength(2);
  });

  it("model pull - sources: URLs and hf: paths map to a URL and a .gguf file name; anything else is an argument error", () => {
    expect(parseModelSource("hf:Qwen/Qwen2.5-7B-Instruct-GGUF/qwen2.5-7b-instruct-q4_k_m.gguf", { env: {} })).toEqual({
      url: "https://huggingface.co/Qwen/Qwen2.5-7B-Instruct-GGUF/resolve/main/qwen2.5-7b-instruct-q4_k_m.gguf",
      fileName: "qwen2.5-7b-instruct-q4_k_m.gguf",
      headers: {},
      fromHub: true,
    });
    expect(parseModelSource("https://example.org/files/a%20b.gguf?download=1", { env: { HF_TOKEN: "x" } })).toMatchObject({ fileName: "a b.gguf", headers: {}, fromHub: false });
    expect(parseModelSource("https://example.org/get?id=7", { name: "named.gguf", env: {} }).fileName).toBe("named.gguf");
    for (const [spec, message] of [
      ["hf:owner/only.gguf", /not hf:OWNER\/REPO\/FILE\.gguf/],
      ["ftp://example.org/m.gguf", /only http\(s\) URLs/],
      ["just words", /neither a URL nor hf:/],
      ["https://example.org/model.safetensors", /does not end in \.gguf/],
      ["https://example.org/", /cannot take a file name/],
    ] as const) {
      expect(() => parseModelSource(spec, { env: {} })).toThrow(EngineArgumentError);
      expect(() => parseModelSource(spec, { env: {} })).toThrow(message);
    }
  });
});
