import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { IndexServiceClient } from "@attr-rag/contracts";
import { credentials } from "@grpc/grpc-js";
import { runCli } from "./helpers/runCli.js";

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "attr-rag-index-serve-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A loopback port nobody listens on: one the system handed out and that was closed again. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe("attr-rag index serve", () => {
  it("cli index serve - serves a new store on a free port, answers GetStats, and exits 0 on SIGTERM", async () => {
    const child = spawn(process.execPath, [MAIN, "index", "serve", "--store", join(dir, "store"), "--create", "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const address = await new Promise<string>((resolve, reject) => {
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        const m = /listening on (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.on("exit", (code) => reject(new Error(`server exited ${code}: ${stderr}`)));
    });
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    const client = new IndexServiceClient(address, credentials.createInsecure());
    const stats = await new Promise<{ documents: number }>((resolve, reject) =>
      client.getStats({}, (err, res) => (err ? reject(err) : resolve(res as unknown as { documents: number }))),
    );
    expect(stats.documents).toBe(0);
    client.close();
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("cli index serve - a missing store without --create and a bad port are usage errors", async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const c = spawn(process.execPath, [MAIN, "index", "serve", ...args], { stdio: ["ignore", "pipe", "pipe"] });
        let stderr = "";
        c.stderr.on("data", (d) => (stderr += d));
        c.on("exit", (code) => resolve({ code, stderr }));
      });
    const missing = await run(["--store", join(dir, "nope")]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--create/);
    const port = await run(["--store", join(dir, "store"), "--port", "70000"]);
    expect(port.code).toBe(2);
  });

  it("cli index serve - a NATS URL it cannot connect to is reported without the URL's password, while it waits and when it gives up", async () => {
    const closed = await closedPort();
    for (const url of [`nats://u:s3cret@127.0.0.1:${closed}`, `nats://a:pa/ss@127.0.0.1:${closed}`]) {
      // One second instead of a role's minute of waiting for a server that does not answer.
      const run = await runCli(["index", "serve", "--store", join(dir, "store-nats"), "--create", "--port", "0", "--nats", url], { ATTR_RAG_NATS_WAIT_SECONDS: "1" });
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(`nats://127.0.0.1:${closed}`);
      // A server that does not answer is waited for, and the wait is said at once; a bad URL is not.
      expect(/trying again for up to 1 s/.test(run.stderr), run.stderr).toBe(url.includes("s3cret"));
      expect(run.stdout + run.stderr).not.toMatch(/s3cret|pa\/ss|u:|a:p/);
    }
  });

  it("cli index serve - ATTR_RAG_NATS_WAIT_SECONDS that is not a number of seconds is a usage error naming it", async () => {
    const run = await runCli(["index", "serve", "--store", join(dir, "store-nats"), "--create", "--port", "0", "--nats", "nats://127.0.0.1:1"], { ATTR_RAG_NATS_WAIT_SECONDS: "soon" });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('ATTR_RAG_NATS_WAIT_SECONDS must be a number of seconds ≥ 0, got "soon"');
  });
});
