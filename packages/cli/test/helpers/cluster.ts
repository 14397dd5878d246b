// A distributed Attr-RAG on this machine for tests: a real nats-server (deploy/nats/nats-server.conf, one
// user per role), and `attr-rag index serve --nats`, `attr-rag worker` (N), `attr-rag selector` and
// `attr-rag serve --nats` as child processes, each with its own role's credentials.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { startNatsServer, type NatsServer } from "@attr-rag/nats";
import { MAIN, REPO_ROOT, TEST_MODEL } from "./runCli.js";

export const PASSWORDS = { gateway: "gw-secret", worker: "wk-secret", selector: "sel-secret", index: "ix-secret" } as const;
export type Role = keyof typeof PASSWORDS;

export class Proc {
  #out = "";
  #err = "";
  readonly exited: Promise<number | null>;

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    child.stdout!.on("data", (d) => (this.#out += d));
    child.stderr!.on("data", (d) => (this.#err += d));
    this.exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));
  }

  get stdout(): string {
    return this.#out;
  }

  get stderr(): string {
    return this.#err;
  }

  /** Resolves when stdout or stderr matches (the match), rejects if the process exits first. */
  async waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = pattern.exec(this.#out) ?? pattern.exec(this.#err);
      if (m !== null) return m;
      if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error(`${this.name} exited before ${pattern}:\n${this.#out}\n${this.#err}`);
      if (Date.now() > deadline) throw new Error(`${this.name}: no ${pattern} within ${timeoutMs} ms:\n${this.#out}\n${this.#err}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    await this.exited;
  }
}

export function credentials(role: Role): string[] {
  return ["--nats-user", role, "--nats-pass", PASSWORDS[role]];
}

/** `attr-rag ARGS` as a long-running child (ATTR_RAG_* cleared so only ARGS count). */
export function spawnCli(name: string, args: readonly string[]): Proc {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ATTR_RAG_")));
  return new Proc(name, spawn(process.execPath, [MAIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env }));
}

export interface ClusterOptions {
  readonly store: string;
  readonly workers: number;
  /** Engine settings of every worker (and of the embedded runs compared with them). */
  readonly engine: readonly string[];
  readonly ackWaitSeconds?: number;
  readonly maxDeliver?: number;
  /** Gateway defaults (k, max tokens, …). */
  readonly gatewayArgs?: readonly string[];
}

export class Cluster implements AsyncDisposable {
  readonly workers: Proc[] = [];
  index!: Proc;
  selector!: Proc;
  gateway!: Proc;
  gatewayAddress = "";
  #nextWorker = 0;

  private constructor(
    readonly nats: NatsServer,
    readonly options: ClusterOptions,
  ) {}

  get url(): string {
    return this.nats.url;
  }

  static async start(options: ClusterOptions): Promise<Cluster> {
    const nats = await startNatsServer({
      configFile: join(REPO_ROOT, "deploy/nats/nats-server.conf"),
      env: {
        ATTR_RAG_GATEWAY_PASSWORD: PASSWORDS.gateway,
        ATTR_RAG_WORKER_PASSWORD: PASSWORDS.worker,
        ATTR_RAG_SELECTOR_PASSWORD: PASSWORDS.selector,
        ATTR_RAG_INDEX_PASSWORD: PASSWORDS.index,
      },
    });
    const cluster = new Cluster(nats, options);
    try {
      cluster.index = spawnCli("index", ["index", "serve", "--store", options.store, "--port", "0", "--nats", nats.url, ...credentials("index")]);
      cluster.selector = spawnCli("selector", ["selector", "--nats", nats.url, ...credentials("selector")]);
      for (let i = 0; i < options.workers; i++) cluster.addWorker();
      await cluster.index.waitFor(/serving the index on NATS/);
      await cluster.selector.waitFor(/selector \S+ serving on/);
      for (const w of cluster.workers) await w.waitFor(/worker \S+ serving model/);
      cluster.gateway = spawnCli("gateway", ["serve", "--nats", nats.url, ...credentials("gateway"), "--model", "stories260K", "--port", "0", ...(options.gatewayArgs ?? [])]);
      cluster.gatewayAddress = (await cluster.gateway.waitFor(/listening on (\S+)/))[1]!;
      return cluster;
    } catch (err) {
      await cluster[Symbol.asyncDispose]();
      throw err;
    }
  }

  addWorker(): Proc {
    const name = `worker-${++this.#nextWorker}`;
    const w = spawnCli(name, [
      "worker",
      "--nats",
      this.url,
      ...credentials("worker"),
      "--model",
      TEST_MODEL,
      "--model-id",
      "stories260K",
      "--name",
      name,
      "--ack-wait",
      String(this.options.ackWaitSeconds ?? 2),
      "--max-deliver",
      String(this.options.maxDeliver ?? 3),
      "--stop-grace",
      "2",
      ...this.options.engine,
    ]);
    this.workers.push(w);
    return w;
  }

  /** Everything the processes printed, for failure messages. */
  logs(): string {
    return [this.gateway, this.index, this.selector, ...this.workers].filter(Boolean).map((p) => `--- ${p.name}\n${p.stdout}${p.stderr}`).join("\n");
  }

  async [Symbol.asyncDispose](): Promise<void> {
    for (const p of [this.gateway, ...this.workers, this.selector, this.index]) await p?.stop("SIGKILL");
    await this.nats[Symbol.asyncDispose]();
  }
}
