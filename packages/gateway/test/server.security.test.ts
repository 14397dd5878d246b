import { execFile, execFileSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, truncateSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials, Metadata, status } from "@grpc/grpc-js";
import { AskRequest, Baseline, BatchServiceClient, IndexServiceClient } from "@attr-rag/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime, startGatewayServer, type GatewayServerHandle } from "../src/index.js";
import { buildDemoStore, QUESTION, testConfig } from "./helpers/demoStore.js";
import { askStream, attrRagClient } from "./helpers/grpcClients.js";
import { BUF } from "./helpers/bufCurl.js";
import { curl, type CurlReply } from "./helpers/curl.js";
import { healthCheck } from "./helpers/probes.js";

const TOKEN = "s3cret-token-for-tests";
const cheapAsk = AskRequest.fromPartial({ question: QUESTION, baseline: { baseline: Baseline.BASELINE_TOPK, k: 2 }, generation: { maxTokens: 4, strategy: 0 } });

/** A self-signed certificate for 127.0.0.1 made with the system's openssl. */
function makeCertificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], { stdio: "ignore" });
  return { cert, key };
}

/** This process's RSS once it stops moving: a gateway just started still grows for a moment, requests or not. */
async function settledRss(): Promise<number> {
  let last = process.memoryUsage().rss;
  for (let i = 0; i < 40; i++) {
    await new Promise((r) => setTimeout(r, 250));
    const now = process.memoryUsage().rss;
    if (Math.abs(now - last) < 512 * 1024) return now;
    last = now;
  }
  return last;
}

/** kB of a field of /proc/self/status (VmHWM: the peak resident set; VmRSS: the current one). */
function statusKb(field: "VmHWM" | "VmRSS"): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(readFileSync("/proc/self/status", "utf8"))![1]);
}

/**
 * How far this process's (the gateway's) peak RSS rises over its current one while `work` runs: the peak is
 * reset first (clear_refs 5), so an earlier peak, e.g. the model's load, cannot hide the rise.
 */
async function peakRssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; grownMiB: number }> {
  writeFileSync("/proc/self/clear_refs", "5");
  const before = statusKb("VmRSS");
  const result = await work();
  return { result, grownMiB: (statusKb("VmHWM") - before) / 1024 };
}

describe("gateway security", () => {
  let store: Awaited<ReturnType<typeof buildDemoStore>>;
  let server: GatewayServerHandle;
  let tls: { cert: string; key: string };
  let certDir: string;

  beforeAll(async () => {
    store = await buildDemoStore();
    certDir = mkdtempSync(join(tmpdir(), "attr-rag-tls-"));
    tls = makeCertificate(certDir);
    const runtime = await Runtime.open(testConfig(store.dir, { authToken: TOKEN, tlsCert: tls.cert, tlsKey: tls.key }));
    server = await startGatewayServer({ runtime, httpPort: 0, log: () => {} });
  });

  afterAll(async () => {
    await server?.close();
    store?.remove();
    rmSync(certDir, { recursive: true, force: true });
  });

  const tlsCredentials = () => credentials.createSsl(readFileSync(tls.cert));

  it("gateway - with a token configured, calls without it or with a wrong one are UNAUTHENTICATED", async () => {
    expect(server.tls).toBe(true);
    const client = attrRagClient(server.address, tlsCredentials());
    const missing = await askStream(client, cheapAsk);
    expect(missing.error?.code).toBe(status.UNAUTHENTICATED);
    const wrong = await askStream(client, cheapAsk, { token: "not-the-token" });
    expect(wrong.error?.code).toBe(status.UNAUTHENTICATED);
    expect(wrong.events).toHaveLength(0);
    const right = await askStream(client, cheapAsk, { token: TOKEN });
    expect(right.error).toBeUndefined();
    expect(right.events.at(-1)?.stage?.$case).toBe("done");
    client.close();
  });

  it("gateway - the HTTP port speaks TLS with the same certificate and wants the same token", async () => {
    const url = `https://${server.http!.address}/attr_rag.v1.IndexService/GetStats`;
    const headers = { "content-type": "application/json" };
    const tlsArgs = ["--cacert", tls.cert];
    const withToken = await curl(url, { body: "{}", headers: { ...headers, authorization: `Bearer ${TOKEN}` }, args: tlsArgs });
    expect(JSON.parse(withToken.body.toString()).documents).toBe(32);
    const without = await curl(url, { body: "{}", headers, args: tlsArgs });
    expect([without.status, JSON.parse(without.body.toString()).code]).toEqual([401, "unauthenticated"]);
    // Any method on an RPC route, not only POST (Connect routes GET for side-effect-free methods).
    const viaGet = await curl(`${url}?encoding=json&message=%7B%7D`, { method: "GET", args: tlsArgs });
    expect([viaGet.status, JSON.parse(viaGet.body.toString()).code]).toEqual([401, "unauthenticated"]);
    const health = await curl(`https://${server.http!.address}/grpc.health.v1.Health/Check`, { body: "{}", headers, args: tlsArgs });
    expect(JSON.parse(health.body.toString())).toEqual({ status: "SERVING" });
    // Plaintext is not served on a TLS port.
    await expect(curl(url.replace("https:", "http:"), { body: "{}", headers, maxTimeS: 5 }).then((r) => r.status)).resolves.not.toBe(200);
  });

  it("gateway - IndexService needs the token too; health answers without it", async () => {
    const index = new IndexServiceClient(server.address, tlsCredentials());
    const stats = (metadata: Metadata) =>
      new Promise<{ documents: number }>((resolve, reject) => index.getStats({}, metadata, (err, res) => (err ? reject(err) : resolve(res))));
    await expect(stats(new Metadata())).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    const good = new Metadata();
    good.set("authorization", `Bearer ${TOKEN}`);
    expect((await stats(good)).documents).toBe(32);
    index.close();
    expect(await healthCheck(server.address, "", tlsCredentials())).toBe("SERVING");
  });

  it("gateway - BatchService needs the token too, streams included", async () => {
    const batches = new BatchServiceClient(server.address, tlsCredentials());
    const get = (metadata: Metadata) => new Promise((resolve, reject) => batches.listBatches({ pageSize: 1, pageToken: "" }, metadata, (err, res) => (err ? reject(err) : resolve(res))));
    await expect(get(new Metadata())).rejects.toMatchObject({ code: status.UNAUTHENTICATED });
    const good = new Metadata();
    good.set("authorization", `Bearer ${TOKEN}`);
    await expect(get(good)).resolves.toMatchObject({ batches: [] });
    const watched = await new Promise<{ code?: number }>((resolve) => {
      const call = batches.watchBatch({ batchId: "any" });
      call.on("error", (err: { code?: number }) => resolve(err));
      call.on("end", () => resolve({}));
    });
    expect(watched.code).toBe(status.UNAUTHENTICATED);
    batches.close();
  });

  it("gateway - an unauthenticated 60 MiB POST is refused with 401 before its body is read: 20 at once that do not wait for 100 Continue all get the 401 and raise the gateway's peak RSS by under 16 MiB; it grows by under 10 MiB, and 50 at once leave health SERVING", async () => {
    // A sparse file: curl streams 60 MiB of zeros from it without this process holding them.
    const big = join(certDir, "big.json");
    truncateSync((writeFileSync(big, ""), big), 60 * 1024 * 1024);
    const url = `https://${server.http!.address}/attr_rag.v1.BatchService/CreateBatch`;
    const post = (extra: string[] = [], headers: Record<string, string> = {}) =>
      curl(url, { headers: { "content-type": "application/json", ...headers }, args: ["--cacert", tls.cert, "--data-binary", `@${big}`, ...extra], maxTimeS: 60 });
    const code = (r: CurlReply) => [r.status, JSON.parse(r.body.toString() || "{}").code];
    // First, while the heap is still small. Without Expect the bodies are on their way when the 401s go out:
    // only a little of each is read, and the answer still reaches curl (a connection reset under it would show
    // as status 000). The peak, not the RSS after: what was read and let go is gone by then.
    // A small refused request first: the port's first TLS connections allocate what later ones reuse.
    expect(code(await curl(url, { body: "{}", headers: { "content-type": "application/json" }, args: ["--cacert", tls.cert] }))).toEqual([401, "unauthenticated"]);
    await settledRss();
    const peak = await peakRssGrowth(() => Promise.all(Array.from({ length: 20 }, () => post(["-H", "Expect:"]))));
    expect(peak.result.map(code)).toEqual(Array(20).fill([401, "unauthenticated"]));
    expect(peak.grownMiB, `20 refused uploads at once raised the gateway's peak RSS by ${peak.grownMiB.toFixed(1)} MiB`).toBeLessThan(16);
    const before = await settledRss();
    // curl asks first (Expect: 100-continue) and is refused before it sends a byte; without asking, the body
    // is on its way when the refusal comes and the connection is closed under it.
    expect(code(await post())).toEqual([401, "unauthenticated"]);
    expect(code(await post(["-H", "Expect:"]))).toEqual([401, "unauthenticated"]);
    expect(code(await post([], { authorization: "Bearer not-the-token" }))).toEqual([401, "unauthenticated"]);
    const many = await Promise.all(Array.from({ length: 50 }, () => post()));
    expect(many.map(code)).toEqual(Array(50).fill([401, "unauthenticated"]));
    const grown = (process.memoryUsage().rss - before) / 2 ** 20;
    expect(grown, `the gateway grew by ${grown.toFixed(1)} MiB`).toBeLessThan(10);
    expect(await healthCheck(server.address, "", tlsCredentials())).toBe("SERVING");
    const health = await curl(`https://${server.http!.address}/grpc.health.v1.Health/Check`, { body: "{}", headers: { "content-type": "application/json" }, args: ["--cacert", tls.cert] });
    expect(JSON.parse(health.body.toString())).toEqual({ status: "SERVING" });
    // With the token, only CreateBatch and IngestDocuments take large bodies; an Ask of 5 MiB is refused unread.
    const five = join(certDir, "five.json");
    truncateSync((writeFileSync(five, ""), five), 5 * 1024 * 1024);
    const ask = await curl(`https://${server.http!.address}/attr_rag.v1.AttrRagService/Attribute`, {
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      args: ["--cacert", tls.cert, "--data-binary", `@${five}`],
    });
    expect(code(ask)).toEqual([429, "resource_exhausted"]);
    expect(ask.body.toString()).toMatch(/over this route's limit of 4194304 bytes \(only CreateBatch and IngestDocuments take large bodies\)/);
  });

  it("gateway - the gRPC port checks the token on the metadata: an unauthenticated 60 MiB CreateBatch (buf curl) is UNAUTHENTICATED and the gateway grows by under 10 MiB", async () => {
    // One item whose question is 60 MiB: under the port's message limit, so only the token check can refuse it.
    const body = join(certDir, "big-batch.json");
    const fd = openSync(body, "w");
    const chunk = Buffer.alloc(1024 * 1024, "q");
    writeSync(fd, '{"batchId":"big","items":[{"itemId":"a","request":{"question":"');
    for (let i = 0; i < 60; i++) writeSync(fd, chunk);
    writeSync(fd, '"}}]}');
    closeSync(fd);
    const before = await settledRss();
    const call = (token?: string) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const args = [BUF, "curl", "--protocol", "grpc", "--cacert", tls.cert, "-d", `@${body}`, ...(token ? ["-H", `authorization: Bearer ${token}`] : []), `https://${server.address}/attr_rag.v1.BatchService/CreateBatch`];
        execFile(process.execPath, args, { maxBuffer: 1024 * 1024 }, (err, _stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }));
      });
    for (const token of [undefined, "not-the-token"]) {
      const r = await call(token);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/unauthenticated/i);
    }
    const grown = (process.memoryUsage().rss - before) / 2 ** 20;
    expect(grown, `the gateway grew by ${grown.toFixed(1)} MiB`).toBeLessThan(10);
    expect(await healthCheck(server.address, "", tlsCredentials())).toBe("SERVING");
  });

  it("gateway - a plaintext client cannot talk to the TLS port", async () => {
    const client = attrRagClient(server.address);
    const outcome = await askStream(client, cheapAsk, { token: TOKEN, deadlineMs: 5_000 });
    expect(outcome.error?.code).toBe(status.UNAVAILABLE);
    client.close();
  });
});

describe("gateway without a token: DNS rebinding", () => {
  let store: Awaited<ReturnType<typeof buildDemoStore>>;
  let runtime: Runtime;
  let server: GatewayServerHandle;
  let consoleDir: string;

  beforeAll(async () => {
    store = await buildDemoStore();
    consoleDir = mkdtempSync(join(tmpdir(), "attr-rag-console-"));
    mkdirSync(consoleDir, { recursive: true });
    writeFileSync(join(consoleDir, "index.html"), "<!doctype html><title>console</title>");
    runtime = await Runtime.open(testConfig(store.dir));
  });

  afterAll(async () => {
    if (server !== undefined) await server.close();
    else await runtime?.dispose();
    store?.remove();
    rmSync(consoleDir, { recursive: true, force: true });
  });

  it("gateway - without a token the HTTP port will not bind beyond loopback, and answers only requests naming a loopback or allowed host (curl with a rebinding page's Host)", async () => {
    await expect(startGatewayServer({ runtime, host: "0.0.0.0", httpPort: 0, disposeRuntime: false, log: () => {} })).rejects.toThrow(/refusing to serve HTTP on 0\.0\.0\.0 without an auth token/);
    server = await startGatewayServer({ runtime, httpPort: 0, consoleDir, allowedHosts: ["lab-proxy.internal"], log: () => {} });
    const port = server.http!.port;
    const stats = (host?: string) =>
      curl(`http://${server.http!.address}/attr_rag.v1.IndexService/GetStats`, { body: "{}", headers: { "content-type": "application/json", ...(host ? { host } : {}) } });
    // A page on attacker.example that rebinds its name to 127.0.0.1 still sends its own name.
    for (const host of [`attacker.example:${port}`, "attacker.example", `127.0.0.1.nip.io:${port}`, "[::2]"]) {
      const r = await stats(host);
      expect([host, r.status, JSON.parse(r.body.toString()).code]).toEqual([host, 403, "permission_denied"]);
    }
    const refused = await stats(`attacker.example:${port}`);
    expect(JSON.parse(refused.body.toString()).message).toMatch(/answers only to loopback host names.*set an auth token/);
    for (const host of [undefined, `localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, "lab-proxy.internal"]) {
      const r = await stats(host);
      expect([host, r.status, JSON.parse(r.body.toString()).documents]).toEqual([host, 200, 32]);
    }
    // The console's own files too, and no page may frame the console.
    expect((await curl(`http://${server.http!.address}/`, { method: "GET", headers: { host: "attacker.example" } })).status).toBe(403);
    const page = await fetch(`http://${server.http!.address}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toMatch(/frame-ancestors 'none'/);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
  });
});
