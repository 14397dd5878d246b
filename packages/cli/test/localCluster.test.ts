import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AskEvent, type AttributionTable } from "@attr-rag/contracts";
import { natsServerMissing } from "@attr-rag/nats";
import { afterAll, describe, expect, it } from "vitest";
import { ClusterProcess } from "@attr-rag/cluster";
import { cleanEnv, REPO_ROOT, runCli } from "./helpers/runCli.js";

const missing = natsServerMissing();
const dir = mkdtempSync(join(tmpdir(), "attr-rag-local-cluster-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const accepts = (address: string) =>
  new Promise<boolean>((resolve) => {
    const [host, port] = [address.slice(0, address.lastIndexOf(":")), Number(address.slice(address.lastIndexOf(":") + 1))];
    const socket = connect({ host, port });
    socket.once("connect", () => (socket.destroy(), resolve(true)));
    socket.once("error", () => resolve(false));
  });

describe("deploy/local/cluster", () => {
  it.skipIf(missing !== undefined)(`deploy/local/cluster - starts nats-server, an index, 2 workers, a selector and a gateway as processes, answers an Ask, and Ctrl-C stops them all${missing ? ` (skipped: ${missing})` : ""}`, async () => {
    // From an empty directory: the demo store is built there (.cache/demo-store), as a new user would get it.
    const child = spawn(join(REPO_ROOT, "deploy/local/cluster"), ["--workers", "2", "--port", "0", "--context-size", "8192", "--quiet"], {
      cwd: dir,
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const script = new ClusterProcess("deploy/local/cluster", child);
    let processes: { name: string; pid: number }[] = [];
    try {
      const address = (await script.waitFor(/gateway listening on (\S+)/, 180_000))[1]!;
      processes = (await script.waitFor(/processes: (.*)/))[1]!.split(", ").map((p) => {
        const [name, pid] = p.split(" ");
        return { name: name!, pid: Number(pid) };
      });
      expect(processes.map((p) => p.name).sort()).toEqual(["gateway", "index", "nats-server", "selector", "worker-1", "worker-2"]);
      for (const p of processes) expect(alive(p.pid), p.name).toBe(true);
      expect(existsSync(join(dir, ".cache/demo-store"))).toBe(true);

      const ask = await runCli(["ask", "Explain all the required steps of the acetaminophen synthesis.", "--server", address, "--k", "6", "--max-tokens", "16", "--json"]);
      expect(ask.code, ask.stderr + script.stderr).toBe(0);
      const events = ask.stdout.trim().split("\n").map((l) => AskEvent.fromJSON(JSON.parse(l)));
      const stage = (c: string) => events.find((e) => e.stage?.$case === c)?.stage?.value as never;
      expect((stage("attribution") as AttributionTable).rows.length).toBeGreaterThan(0);
      expect((stage("finalAnswer") as { text: string }).text.length).toBeGreaterThan(0);
      expect(events.at(-1)!.stage!.$case).toBe("done");

      // Ctrl-C reaches the script's process only (each service runs in a process group of its own); it stops
      // them in order and exits cleanly.
      child.kill("SIGINT");
      expect(await script.exited).toBe(0);
      expect(script.stderr).toMatch(/cluster: SIGINT: stopping/);
      expect(script.stderr).toMatch(/cluster: stopped/);
      await expect.poll(() => processes.filter((p) => alive(p.pid)).map((p) => p.name), { timeout: 10_000 }).toEqual([]);
      expect(await accepts(address)).toBe(false);
    } finally {
      // A failed assertion must not leave the cluster running: its services are in process groups of their own.
      if (script.running) {
        child.kill("SIGINT");
        await Promise.race([script.exited, new Promise((r) => setTimeout(r, 30_000))]);
      }
      await script.stop("SIGKILL");
      for (const p of processes) if (alive(p.pid)) process.kill(p.pid, "SIGKILL");
    }
  }, 300_000);

  it("deploy/local/cluster - bad options are refused with the option named, before anything starts", async () => {
    const r = await runCli(["cluster", "--workers", "0"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--workers must be a positive integer, got "0"/);
    const port = await runCli(["cluster", "--port", "99999"]);
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/--port must be an integer from 0 to 65535/);
  });
});
