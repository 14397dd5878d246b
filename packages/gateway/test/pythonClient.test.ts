// The Python client package (clients/python) against a real gateway: installed the way docs/api.md says, its own
// unittest suite, every Python block of docs/api.md's "Clients in other languages", the same Ask through the
// package, the CLI and buf curl compared field by field, and the examples/python programs built on it.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime, startGatewayServer, type GatewayServerHandle } from "../src/index.js";
import { bufCurl, jsonMessages } from "./helpers/bufCurl.js";
import { buildDemoStore, QUESTION, REPO_ROOT, testConfig } from "./helpers/demoStore.js";

const SYSTEM_PYTHON = "/usr/bin/python3";
const EXAMPLES = join(REPO_ROOT, "examples/python");
const CLI = join(REPO_ROOT, "packages/cli/dist/main.js");
const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const TOKEN = "python-client-token";

/** Why the Python client cannot run here; under CI=true never (a CI without grpcio must fail this suite). */
function pythonGrpcMissing(): string | undefined {
  if (process.env.CI === "true") return undefined;
  try {
    execFileSync(SYSTEM_PYTHON, ["-c", "import grpc, grpc_tools, venv, ensurepip"], { stdio: "ignore" });
    return undefined;
  } catch {
    return "needs apt-get install -y python3-grpcio python3-grpc-tools python3-venv python3-pip";
  }
}

/** The fenced blocks of docs/api.md's "Clients in other languages" section, in order. */
export function clientDocBlocks(): { lang: string; code: string }[] {
  const doc = readFileSync(join(REPO_ROOT, "docs/api.md"), "utf8");
  const start = doc.indexOf("## Clients in other languages");
  const section = doc.slice(start, doc.indexOf("\n# ", start));
  return [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

/** A loopback port nobody listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], cwd: options.cwd ?? REPO_ROOT, env: { ...process.env, ...options.env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

/** proto3 JSON from three encoders made comparable: int64 as strings (protojson, Python) or numbers (ts-proto),
 *  and what differs between two runs of the same Ask (request id, elapsed and stage times) left out. */
function comparable(event: unknown): unknown {
  return JSON.parse(JSON.stringify(event, (key, value) => {
    if (key === "requestId" || key === "elapsedMs" || key === "timings") return undefined;
    return typeof value === "string" && /^-?\d+$/.test(value) && key !== "text" ? Number(value) : value;
  }));
}

describe("client docs", () => {
  it("client docs - docs/api.md's client section holds only blocks a test runs: sh (the install), Python, and Go verbatim from clients/go/examples/ask", () => {
    const blocks = clientDocBlocks();
    expect(blocks.map((b) => b.lang).sort()).toEqual(["go", "python", "python", "python", "python", "python", "sh"]);
    // goClient.test.ts builds and runs that program against a real gateway.
    expect(blocks.find((b) => b.lang === "go")!.code).toBe(readFileSync(join(REPO_ROOT, "clients/go/examples/ask/main.go"), "utf8"));
  });
});

const missing = pythonGrpcMissing();

describe.skipIf(missing !== undefined)(`python client${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let store: Awaited<ReturnType<typeof buildDemoStore>>;
  let server: GatewayServerHandle;
  let home: string;
  let python: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    store = await buildDemoStore();
    // One Ask at a time and none queued, so a second concurrent Ask is refused with RESOURCE_EXHAUSTED (the
    // retry test); an HTTP port and a webhook secret (receivers on this machine allowed) for batches; k 4 for
    // docs/api.md's blocks, which leave k to the gateway.
    server = await startGatewayServer({
      runtime: await Runtime.open(
        testConfig(store.dir, { authToken: TOKEN, webhookSecret: WEBHOOK_SECRET, webhookAllowedHosts: "127.0.0.1", maxConcurrentAsks: 1, maxQueuedAsks: 0, k: 4 }),
      ),
      httpPort: 0,
    });
    // Installed exactly as docs/api.md says, into a home of its own, from a tree without generated stubs or
    // build output (git-ignored; a fresh clone has none either).
    for (const made of ["attr_rag/v1", "build", "attr_rag.egg-info"]) rmSync(join(REPO_ROOT, "clients/python", made), { recursive: true, force: true });
    home = mkdtempSync(join(tmpdir(), "attr-rag-py-home-"));
    const install = clientDocBlocks().find((b) => b.lang === "sh")!;
    expect(install.code).toMatch(/pip install --no-index/);
    const installed = await run("bash", ["-euo", "pipefail", "-c", install.code], { env: { HOME: home } });
    expect(installed.code, installed.stderr).toBe(0);
    python = join(home, ".venvs/attr-rag/bin/python");
    env = {
      HOME: home,
      ATTR_RAG_ADDRESS: server.address,
      ATTR_RAG_HTTP: `http://${server.http!.address}`,
      ATTR_RAG_TOKEN: TOKEN,
      ATTR_RAG_WEBHOOK_SECRET: WEBHOOK_SECRET,
      ATTR_RAG_TEST_ADDRESS: server.address,
      ATTR_RAG_TEST_HTTP: `http://${server.http!.address}`,
      ATTR_RAG_TEST_TOKEN: TOKEN,
      ATTR_RAG_TEST_WEBHOOK_SECRET: WEBHOOK_SECRET,
      ATTR_RAG_TEST_QUESTION: QUESTION,
    };
  });
  afterAll(async () => {
    await server?.close();
    store?.remove();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it("python client - the package's own unittest suite passes against the real gateway, none skipped", async () => {
    const suite = await run(python, ["-m", "unittest", "discover", "-v", "-s", "clients/python/tests"], { env });
    expect(suite.code, suite.stderr).toBe(0);
    expect(suite.stderr).not.toMatch(/skipped/);
    const passed = [...suite.stderr.matchAll(/^(test_\w+) .* \.\.\. ok$/gm)].map((m) => m[1]);
    for (const name of [
      "test_streamed_ask_has_every_stage_in_order_and_a_typed_result",
      "test_asyncio_client_gives_the_same_result",
      "test_attribute_scores_the_sets_given",
      "test_wrong_token_raises_unauthenticated_with_the_servers_message",
      "test_bad_request_raises_invalid_argument_at_once",
      "test_retries_after_resource_exhausted_then_succeeds",
      "test_openai_file_batch_is_waited_on_verified_and_downloaded_with_a_resume",
      "test_rows_batch_with_a_failing_item_cancel_and_list",
      "test_asyncio_batches_create_wait_read_and_download",
      "test_a_genuine_delivery_returns_its_event",
    ]) {
      expect(passed, suite.stderr).toContain(name);
    }
  });

  it("python client - every Python block of docs/api.md runs as written and prints what the text says", async () => {
    const blocks = clientDocBlocks().filter((b) => b.lang === "python");
    expect(blocks).toHaveLength(5);
    const work = mkdtempSync(join(tmpdir(), "attr-rag-py-docs-"));
    try {
      const outputs: string[] = [];
      for (const [i, block] of blocks.entries()) {
        // The webhook block only defines a handler: call it with a genuine and a forged delivery.
        const check = block.code.includes("def on_webhook")
          ? [
              "import json, time, attr_rag",
              "body = json.dumps({'type': 'batch.completed', 'data': {'id': 'nightly', 'counts': {'succeeded': 2}}}).encode()",
              "stamp = str(int(time.time()))",
              "headers = {'webhook-id': 'evt_1', 'webhook-timestamp': stamp, 'webhook-signature': attr_rag.sign_webhook(os.environ['ATTR_RAG_WEBHOOK_SECRET'], 'evt_1', stamp, body)}",
              "print('genuine', on_webhook(headers, body))",
              "print('forged', on_webhook(headers, body.replace(b'nightly', b'other'))[0])",
            ].join("\n")
          : "";
        const file = join(work, `block${i}.py`);
        writeFileSync(file, `${block.code}\n${check}\n`);
        const ran = await run(python, [file], { env, cwd: work });
        expect(ran.code, `block ${i}:\n${block.code}\n${ran.stderr}`).toBe(0);
        outputs.push(ran.stdout);
      }
      const [ask, batch, webhook, errors, asyncio] = outputs as [string, string, string, string, string];
      expect(ask).toMatch(/^retrieved aligned reranked initial_answer_delta .*final_answer done \n/);
      expect(ask).toMatch(/: cosine α \d\.\d\d, kept$/m);
      expect(batch).toMatch(/^completed \{'queued': 0, 'running': 0, 'succeeded': 2, 'failed': 0, 'cancelled': 0\} \d+ bytes$/m);
      expect(batch).toMatch(/^q-0 OK \S/m);
      expect(readFileSync(join(work, "results.jsonl"), "utf8").trim().split("\n")).toHaveLength(2);
      expect(webhook).toMatch(/^batch\.completed nightly \{'succeeded': 2\}\ngenuine \(204, ''\)\nforged 401$/m);
      expect(errors).toMatch(/^UNAUTHENTICATED: .+; pass token= \(or set ATTR_RAG_TOKEN\)/);
      expect(asyncio.trim().length).toBeGreaterThan(0);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it("python client - the same Ask through the Python package, the CLI and buf curl is equal field by field", async () => {
    const options = { k: 4, maxTokens: 8 };
    // The package: each typed event's protobuf message as proto3 JSON, and the typed result beside it.
    const script = [
      "import json, sys",
      "from google.protobuf import json_format",
      "import attr_rag",
      "with attr_rag.Client(sys.argv[1]) as client:",
      `    result = client.ask(sys.argv[2], k=${options.k}, max_tokens=${options.maxTokens})`,
      "for event in result.events:",
      "    print(json.dumps(json_format.MessageToDict(event.message)))",
      "print(json.dumps({'typed': {'final': result.final_answer.text, 'initial': result.initial_answer,",
      "    'selected': result.selection.selected_set_ids, 'sets': [s.set_id for s in result.sets],",
      "    'alpha': {r.set_id: r.alpha for r in result.attribution.rows},",
      "    'citations': [[c.start, c.end, c.chunk_ids] for c in result.final_answer.citations]}}))",
    ].join("\n");
    const viaPython = await run(python, ["-c", script, server.address, QUESTION], { env });
    expect(viaPython.code, viaPython.stderr).toBe(0);
    const pyLines = viaPython.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    const typed = pyLines.pop()!.typed as { final: string; initial: string; selected: string[]; sets: string[]; alpha: Record<string, Record<string, number>>; citations: unknown[] };

    const viaCli = await run(process.execPath, [CLI, "ask", "--server", server.address, "--token", TOKEN, "--json", "--k", String(options.k), "--max-tokens", String(options.maxTokens), QUESTION]);
    expect(viaCli.code, viaCli.stderr).toBe(0);
    const cliEvents = viaCli.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);

    const request = { question: QUESTION, retrieval: { k: options.k }, generation: { maxTokens: options.maxTokens } };
    const viaBuf = jsonMessages(await bufCurl("-H", `authorization: Bearer ${TOKEN}`, "-d", JSON.stringify(request), `http://${server.address}/attr_rag.v1.AttrRagService/Ask`));
    const bufEvents = viaBuf.map((m) => (m as { event: unknown }).event);

    expect(cliEvents.length).toBeGreaterThan(10);
    expect(pyLines.map(comparable)).toEqual(cliEvents.map(comparable));
    expect(bufEvents.map(comparable)).toEqual(cliEvents.map(comparable));

    // The typed result holds the same values as the events it was gathered from.
    const stage = <T>(name: string) => cliEvents.find((e) => name in e)![name] as T;
    const finalAnswer = stage<{ text: string; citations?: { start?: number; end?: number; chunkIds: string[] }[] }>("finalAnswer");
    expect(typed.final).toBe(finalAnswer.text);
    expect(typed.citations).toEqual((finalAnswer.citations ?? []).map((c) => [c.start ?? 0, c.end ?? 0, c.chunkIds]));
    expect(typed.selected).toEqual(stage<{ selectedSetIds: string[] }>("selection").selectedSetIds);
    expect(typed.sets).toEqual(stage<{ sets: { setId: string }[] }>("aligned").sets.map((s) => s.setId));
    const rows = stage<{ rows: { setId: string; scores: { metric: string; alpha?: number }[] }[] }>("attribution").rows;
    expect(typed.alpha).toEqual(
      Object.fromEntries(rows.map((r) => [r.setId, Object.fromEntries(r.scores.map((s) => [s.metric.replace(/^ATTRIBUTION_METRIC_/, "").toLowerCase(), s.alpha ?? 0]))])),
    );
    const initial = cliEvents.filter((e) => "initialAnswerDelta" in e).map((e) => (e.initialAnswerDelta as { text?: string }).text ?? "");
    expect(typed.initial).toBe(initial.join(""));
  });

  it("python client - over TLS with tls_ca: Ask, a batch and its HTTPS download; a plaintext client is refused as UNAVAILABLE", async () => {
    const dir = mkdtempSync(join(tmpdir(), "attr-rag-py-tls-"));
    const key = join(dir, "key.pem");
    const cert = join(dir, "cert.pem");
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], { stdio: "ignore" });
    const tlsStore = await buildDemoStore();
    const tlsServer = await startGatewayServer({ runtime: await Runtime.open(testConfig(tlsStore.dir, { authToken: TOKEN, tlsCert: cert, tlsKey: key, k: 3 })), httpPort: 0 });
    try {
      const script = [
        "import sys, attr_rag",
        "address, cert, http = sys.argv[1:4]",
        "with attr_rag.Client(address, tls_ca=cert, http=http) as client:",
        "    result = client.ask(sys.argv[4], max_tokens=4)",
        "    print('ask', result.done is not None, len(result.final_answer.text) > 0)",
        "    batch = client.batches.create(rows=[{'id': 'a', 'question': sys.argv[4], 'max_tokens': 4}])",
        "    print('batch', client.batches.wait(batch.batch_id).state)",
        "    print('download', client.batches.download(batch.batch_id, sys.argv[5]).results)",
        "with attr_rag.Client(address, retry=attr_rag.NO_RETRY) as plain:",
        "    try:",
        "        plain.batches.retrieve(batch.batch_id)",
        "    except attr_rag.UnavailableError as error:",
        "        print('plaintext', error.code.name, 'tls_ca=' in str(error))",
      ].join("\n");
      const ran = await run(python, ["-c", script, `127.0.0.1:${tlsServer.port}`, cert, `https://${tlsServer.http!.address}`, QUESTION, join(dir, "results.jsonl")], { env });
      expect(ran.code, ran.stderr).toBe(0);
      expect(ran.stdout.trim().split("\n")).toEqual(["ask True True", "batch completed", "download 1", "plaintext UNAVAILABLE True"]);
      expect(JSON.parse(readFileSync(join(dir, "results.jsonl"), "utf8")).id).toBe("a");
    } finally {
      await tlsServer.close();
      tlsStore.remove();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("python client - ask_client.py streams every stage as JSON lines; --reflect, from reflection alone, prints the same", async () => {
    const args = ["--address", server.address, "--question", QUESTION, "--json", "--max-tokens", "12", "--k", "5"];
    const viaPackage = await run(python, [join(EXAMPLES, "ask_client.py"), ...args], { env });
    expect(viaPackage.code, viaPackage.stderr).toBe(0);
    const events = viaPackage.stdout.trim().split("\n").map((l) => JSON.parse(l) as { stage: string; request_id: string; selection?: { selected_set_ids: string[] } });
    const order = events.map((e) => e.stage).filter((s, i, all) => i === 0 || all[i - 1] !== s);
    expect(order).toEqual(["retrieved", "aligned", "reranked", "initial_answer_delta", "occlusion_progress", "attribution", "selection", "gap_fill", "final_answer_delta", "final_answer", "done"]);
    expect(new Set(events.map((e) => e.request_id)).size).toBe(1);
    expect(events.find((e) => e.stage === "selection")!.selection!.selected_set_ids.length).toBeGreaterThan(0);

    // --reflect: only the two scripts, in a folder with no protos/ and no package, run by Debian's own python.
    const bare = mkdtempSync(join(tmpdir(), "attr-rag-py-reflect-"));
    try {
      for (const file of ["ask_client.py", "reflected_api.py"]) copyFileSync(join(EXAMPLES, file), join(bare, file));
      const reflected = await run(SYSTEM_PYTHON, [join(bare, "ask_client.py"), "--reflect", ...args], { env, cwd: bare });
      expect(reflected.code, reflected.stderr).toBe(0);
      expect(readdirSync(bare).filter((f) => f !== "__pycache__").sort()).toEqual(["ask_client.py", "reflected_api.py"]);
      const strip = (out: string) => out.trim().split("\n").map((l) => JSON.stringify(JSON.parse(l), (k, v) => (k === "request_id" || k.endsWith("_ms") ? undefined : v)));
      expect(strip(reflected.stdout)).toEqual(strip(viaPackage.stdout));
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
    // A wrong token: the package's typed error, exit code 2.
    const wrong = await run(python, [join(EXAMPLES, "ask_client.py"), "--address", server.address, "--question", QUESTION, "--token", "wrong"], { env });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/^error: UNAUTHENTICATED: /m);
  });

  it("python client - batch.py submits a JSONL batch, watches it, writes every result; run again it resumes without a duplicate", async () => {
    const work = mkdtempSync(join(tmpdir(), "attr-rag-py-batch-"));
    try {
      const rows = join(work, "rows.jsonl");
      const out = join(work, "results.jsonl");
      const lines = [
        { id: "one", question: QUESTION, k: 4, max_tokens: 6 },
        { id: "two", question: "How do I collect oxygen gas over water?", max_tokens: 6, baseline: "topk" },
        { id: "empty", question: " " },
      ];
      writeFileSync(rows, lines.map((r) => JSON.stringify(r)).join("\n") + "\n");
      const args = [join(EXAMPLES, "batch.py"), "--address", server.address, "--file", rows, "--out", out];
      const first = await run(python, args, { env });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toMatch(/batch: submitted py-\w+ \(3 items\)/);
      expect(first.stderr).toMatch(/completed, 3\/3 done \(2 ok, 1 failed/);
      const results = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { id: string; status: string; answer: string; error?: string; kept_sets: unknown[] });
      const byId = new Map(results.map((r) => [r.id, r]));
      expect([...byId.keys()].sort()).toEqual(["empty", "one", "two"]);
      expect(byId.get("one")!.status).toBe("ok");
      expect(byId.get("one")!.kept_sets.length).toBeGreaterThan(0);
      expect(byId.get("two")!.answer.length).toBeGreaterThan(0);
      expect(byId.get("empty")).toMatchObject({ status: "INVALID_ARGUMENT", error: "question is empty" });
      const again = await run(python, args, { env });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toMatch(/already submitted/);
      expect(again.stderr).toMatch(/0 results written .* \(3 were there already\)/);
      expect(readFileSync(out, "utf8").trim().split("\n")).toHaveLength(3);
      writeFileSync(rows, '{"id": "x", "question": "q", "k": 0}\n');
      const bad = await run(python, args, { env });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/rows\.jsonl:1: k must be an integer >= 1; got 0; nothing was submitted/);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });

  it("python client - the pipeline example submits an OpenAI-shaped file, verifies the webhook, downloads the results with resume", async () => {
    const work = mkdtempSync(join(tmpdir(), "attr-rag-py-pipeline-"));
    try {
      const file = join(work, "nightly.jsonl");
      const out = join(work, "results.jsonl");
      const lines = [
        { custom_id: "n-1", method: "POST", url: "/v1/ask", body: { question: QUESTION, k: 3, max_tokens: 4 } },
        { custom_id: "n-2", method: "POST", url: "/v1/ask", body: { question: "How do I collect oxygen gas over water?", k: 3, max_tokens: 4 } },
      ];
      writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
      const port = await freePort();
      const args = [join(EXAMPLES, "batch_pipeline.py"), "--address", server.address, "--http", `http://${server.http!.address}`, "--file", file, "--out", out, "--listen", `127.0.0.1:${port}`, "--webhook-url", `http://127.0.0.1:${port}/attr-rag`, "--timeout", "240"];
      const first = await run(python, args, { env });
      expect(first.code, first.stderr).toBe(0);
      expect(first.stderr).toMatch(/submitted py-\w+ \(2 items\); waiting for the webhook/);
      expect(first.stderr).toMatch(/batch\.completed .*'succeeded': 2/);
      const results = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { custom_id: string; response: { status_code: number } });
      expect(results.map((r) => r.custom_id).sort()).toEqual(["n-1", "n-2"]);
      expect(results.every((r) => r.response.status_code === 200)).toBe(true);
      // A wrong secret on the receiving side: every call is refused (401), so no event arrives in time.
      const forged = await run(python, [...args.map((a) => (a === "240" ? "3" : a)), "--id", "other-batch"], { env: { ...env, ATTR_RAG_WEBHOOK_SECRET: `whsec_${randomBytes(32).toString("base64")}` } });
      expect(forged.code).toBe(2);
      expect(forged.stderr).toMatch(/no webhook for batch other-batch within 3 s/);
      // Resume: cut the file mid-line, run again: the same bytes, resumed where the cut was.
      const whole = readFileSync(out);
      writeFileSync(out, whole.subarray(0, Math.floor(whole.length / 2)));
      const again = await run(python, args, { env });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toMatch(/already submitted/);
      expect(again.stderr).toMatch(new RegExp(`resumed at byte ${Math.floor(whole.length / 2)}`));
      expect(readFileSync(out).equals(whole)).toBe(true);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
