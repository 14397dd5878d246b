import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime, startGatewayServer, type GatewayServerHandle } from "../src/index.js";
import { buildDemoStore, REPO_ROOT, testConfig } from "./helpers/demoStore.js";

const GO_CLIENT = join(REPO_ROOT, "clients/go");
const TOKEN = "go-client-token";
const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString("base64")}`;
/** Every test of clients/go, each of which must PASS: one skipped for a missing variable fails this file. */
const GO_TESTS = [
  "TestAskStreamsEveryStageInOrder",
  "TestWrongTokenIsUnauthenticated",
  "TestBatchRunsWaitsResumesAndCallsItsWebhook",
  "TestCancelBatchEndsItCancelled",
  "TestVerifyWebhookAcceptsAValidSignature",
  "TestVerifyWebhookRefusesForgedOldAndIncompleteCalls",
  "TestVerifyWebhookSaysWhenTheSecretIsMalformed",
  "TestDialSaysWhatIsWrongWithTheCAFile",
  "TestExampleAsksTheGateway",
  "TestBusyGatewayAskIsRetriedUntilAdmitted",
  "TestBackoffGrowsByTheMultiplierUpToTheCap",
  "TestBackoffJitterSpreadsEitherWayWithinTheCap",
  "TestRetryPolicyZeroFieldsTakeTheDefaults",
  "TestRetryCallRetriesOnlyTransientCodes",
  "TestRetryStopsWaitingWhenTheContextEnds",
  "TestRetryStreamReopensOnlyBeforeTheFirstMessage",
];

/** Why the Go client cannot be built here; under CI=true never (a CI without Go must fail this suite). */
function goMissing(): string | undefined {
  if (process.env.CI === "true") return undefined;
  try {
    execFileSync("go", ["version"], { stdio: "ignore" });
    execFileSync("sh", ["-c", "command -v protoc-gen-go && command -v protoc-gen-go-grpc"], { stdio: "ignore" });
    if (existsSync("/usr/share/gocode/src/google.golang.org/grpc")) return undefined;
  } catch {
    // reported below
  }
  return "needs apt-get install -y golang-go golang-google-grpc-dev golang-google-protobuf-dev protoc-gen-go protoc-gen-go-grpc";
}

/** Runs a command in clients/go without blocking the event loop (the gateway answers from this process). */
function run(command: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: GO_CLIENT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("error", (e) => (output += `${e.message}\n`));
    child.on("close", (code) => resolve({ code, output }));
  });
}

const missing = goMissing();

describe.skipIf(missing !== undefined)(`go client${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let store: Awaited<ReturnType<typeof buildDemoStore>>;
  let server: GatewayServerHandle;
  const certs = mkdtempSync(join(tmpdir(), "attr-rag-go-tls-"));
  const cert = join(certs, "cert.pem");

  beforeAll(async () => {
    store = await buildDemoStore();
    // TLS with a self-signed certificate for 127.0.0.1, which the Go client trusts as its CA file.
    const key = join(certs, "key.pem");
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], { stdio: "ignore" });
    // Webhooks to this machine allowed: the batch test receives its batch's webhook on 127.0.0.1. One Ask at a
    // time and none queued: a second concurrent Ask is refused with RESOURCE_EXHAUSTED, which the retry test
    // needs; the other tests run one after another and ride out a refusal with the client's default retries.
    const config = { authToken: TOKEN, tlsCert: cert, tlsKey: key, webhookSecret: WEBHOOK_SECRET, webhookAllowedHosts: "127.0.0.1", k: 4, maxTokens: 8, maxConcurrentAsks: 1, maxQueuedAsks: 0 };
    server = await startGatewayServer({ runtime: await Runtime.open(testConfig(store.dir, config)) });
  });
  afterAll(async () => {
    await server?.close();
    store?.remove();
    rmSync(certs, { recursive: true, force: true });
  });

  it("go client - generates its code, builds offline from Debian's Go packages and passes go test against a real gateway over TLS", async () => {
    for (const script of ["./generate.sh", "./debian-vendor.sh"]) {
      const step = await run(script, []);
      expect(step.code, `${script}\n${step.output}`).toBe(0);
    }
    // -p 1: the packages' tests take turns, as the gateway admits one Ask at a time.
    const test = await run("go", ["test", "-v", "-count=1", "-p", "1", "-timeout", "8m", "./..."], {
      ATTR_RAG_TEST_ADDRESS: server.address,
      ATTR_RAG_TEST_TOKEN: TOKEN,
      ATTR_RAG_TEST_WEBHOOK_SECRET: WEBHOOK_SECRET,
      ATTR_RAG_TEST_CA: cert,
      // Offline: only the vendored Debian sources, no module proxy, no workspace of the caller's.
      GOFLAGS: "-mod=vendor",
      GOPROXY: "off",
      GOWORK: "off",
      GOCACHE: process.env.GOCACHE ?? join(homedir(), ".cache/go-build"),
    });
    expect(test.code, test.output).toBe(0);
    for (const name of GO_TESTS) expect(test.output, test.output).toMatch(new RegExp(`^--- PASS: ${name} `, "m"));
    expect(test.output).not.toMatch(/--- (SKIP|FAIL)/);
  }, 900_000);
});
