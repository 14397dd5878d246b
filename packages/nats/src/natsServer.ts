// A real nats-server with JetStream on a loopback port and a store directory, started and stopped by tests,
// `deploy/local/cluster` and `attr-rag bench cluster`. It can be killed and restarted on the same port and
// directory (what a crashed server looks like to clients).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface NatsServerOptions {
  /** Default: a free loopback port. */
  readonly port?: number;
  /** JetStream store directory; default a fresh temporary one, removed by dispose(). */
  readonly storeDir?: string;
  /** A server configuration file (accounts, users, permissions), passed as -c. */
  readonly configFile?: string;
  /** The executable; default `nats-server` from PATH. */
  readonly executable?: string;
  /** Extra environment (a configuration file may read passwords from $VARIABLES). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Run in a process group of its own, so a terminal's Ctrl-C reaches only its parent, which then stops the
   * server last (after the services that use it). The parent must stop it; it does not die with the parent.
   */
  readonly detached?: boolean;
}

export interface NatsServer extends AsyncDisposable {
  readonly url: string;
  readonly port: number;
  readonly storeDir: string;
  /** The server's output so far (for test failure messages). */
  readonly log: () => string;
  /** The running server's process id (undefined between a kill and a restart). */
  readonly pid: () => number | undefined;
  /** SIGTERM, wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL, wait for exit: no clean shutdown, as in a crash. */
  kill(): Promise<void>;
  /** Start again on the same port with the same store directory. */
  restart(): Promise<void>;
}

export function natsServerAvailable(executable = "nats-server"): boolean {
  return spawnSync(executable, ["--version"], { stdio: "ignore" }).status === 0;
}

/**
 * Why no nats-server can be started here (tests skip with it as their reason), or undefined when one can.
 * Under CI=true it is always undefined: a CI machine that lost nats-server must fail every suite that needs
 * it (startNatsServer says what is missing), never skip them quietly.
 */
export function natsServerMissing(executable = "nats-server"): string | undefined {
  if (process.env.CI === "true") return undefined;
  return natsServerAvailable(executable) ? undefined : `${executable} is not on PATH (Debian: apt-get install -y nats-server; .ci/run installs it)`;
}

export async function startNatsServer(options: NatsServerOptions = {}): Promise<NatsServer> {
  const executable = options.executable ?? "nats-server";
  if (!natsServerAvailable(executable)) {
    throw new Error(`${executable} was not found on PATH; install it (Debian: apt-get install -y nats-server) or pass its path`);
  }
  const ownDir = options.storeDir === undefined;
  const storeDir = options.storeDir ?? mkdtempSync(join(tmpdir(), "attr-rag-nats-"));
  const port = options.port ?? (await freePort());
  let child: ChildProcess | undefined;
  let output = "";
  const args = ["-js", "-sd", storeDir, "-a", "127.0.0.1", "-p", String(port), ...(options.configFile ? ["-c", options.configFile] : [])];

  const launch = async () => {
    output += `--- ${executable} ${args.join(" ")}\n`;
    const proc = spawn(executable, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...options.env }, detached: options.detached ?? false });
    child = proc;
    proc.stdout!.on("data", (d) => (output += d));
    proc.stderr!.on("data", (d) => (output += d));
    const exited = new Promise<number | null>((resolve) => proc.once("exit", resolve));
    const deadline = Date.now() + 15_000;
    while (!(await accepts(port))) {
      if (proc.exitCode !== null || Date.now() > deadline) {
        proc.kill("SIGKILL");
        await exited;
        throw new Error(`nats-server did not start on port ${port}:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const end = async (signal: NodeJS.Signals) => {
    const proc = child;
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    proc.kill(signal);
    await exited;
  };

  await launch();
  const stop = () => end("SIGTERM");
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    log: () => output,
    pid: () => (child !== undefined && child.exitCode === null && child.signalCode === null ? child.pid : undefined),
    stop,
    kill: () => end("SIGKILL"),
    restart: async () => {
      await end("SIGTERM");
      await launch();
    },
    [Symbol.asyncDispose]: async () => {
      await stop();
      if (ownDir) rmSync(storeDir, { recursive: true, force: true });
    },
  };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
    socket.connect(port, "127.0.0.1");
  });
}
