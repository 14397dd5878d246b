import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials, Metadata, status } from "@grpc/grpc-js";
import { AskRequest, Baseline, BatchServiceClient, IndexServiceClient } from "@attr-rag/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime, startGatewayServer, type GatewayServerHandle } from "../src/index.js";
import { buildDemoStore, QUESTION, testConfig } from "./helpers/demoStore.js";
import { askStream, attrRagClient } from "./helpers/grpcClients.js";
import { curl } from "./helpers/curl.js";
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

  it("gateway - a plaintext client cannot talk to the TLS port", async () => {
    const client = attrRagClient(server.address);
    const outcome = await askStream(client, cheapAsk, { token: TOKEN, deadlineMs: 5_000 });
    expect(outcome.error?.code).toBe(status.UNAVAILABLE);
    client.close();
  });
});
