// A whole distributed Attr-RAG on this machine: nats-server (from PATH, with deploy/nats/nats-server.conf's
// per-role users), `attr-rag index serve --nats`, N `attr-rag worker`s, `attr-rag selector` and
// `attr-rag serve --nats`, each a process of its own with its own role's credentials. What
// `deploy/local/cluster` runs, what `attr-rag bench cluster` measures and what the distributed tests start.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { startNatsServer, type NatsServer } from "@attr-rag/nats";
import { modelIdOf } from "@attr-rag/worker";
import { CliError } from "../cliError.js";
import { checkClusterPassword, newClusterPassword } from "./clusterPasswords.js";
import { ClusterProcess } from "./clusterProcess.js";

export const NATS_CONFIG = fileURLToPath(new URL("../../../../deploy/nats/nats-server.conf", import.meta.url));

export const ROLES = ["gateway", "worker", "selector", "index"] as const;
export type Role = (typeof ROLES)[number];

export interface LocalClusterOptions {
  /** Chunk store the index service opens (made by attr-rag ingest). */
  readonly store: string;
  readonly workers: number;
  /** Generator GGUF every worker loads. */
  readonly modelPath: string;
  /** The model id workers serve and the gateway asks for; default: from the file name. */
  readonly modelId?: string;
  /** Engine flags of every worker (--threads, --context-size, …). */
  readonly workerArgs?: readonly string[];
  /**
   * A GGUF cross-encoder: `rerankerWorkers` workers serve it (re-rank only) and the gateways re-rank with it
   * (serve --reranker ID).
   */
  readonly rerankerPath?: string;
  /** Its id; default: from the file name. */
  readonly rerankerId?: string;
  /** Re-rank workers when rerankerPath is set. Default 1. */
  readonly rerankerWorkers?: number;
  /**
   * The store's GGUF embedder: the index embeds with it (`index serve --embedder gguf:PATH`, the store must
   * have been built with it) and `embedderWorkers` workers serve its embed jobs (`worker --embedder PATH`).
   */
  readonly embedderPath?: string;
  /** Embed-only workers when embedderPath is set. Default 1; 0 leaves the index embedding in its own process. */
  readonly embedderWorkers?: number;
  /** Gateway flags (request defaults, limits). */
  readonly gatewayArgs?: readonly string[];
  /** Gateways (each its own process on its own port; all share the batches in JetStream). Default 1. */
  readonly gateways?: number;
  /** Gateway port; 0 (default) for a free one. */
  readonly gatewayPort?: number;
  readonly ackWaitSeconds?: number;
  readonly maxDeliver?: number;
  /** Per-role NATS passwords; default: random ones for this run. */
  readonly passwords?: Readonly<Record<Role, string>>;
  /** Every process's output, line by line, prefixed with its name. */
  readonly echo?: (line: string) => void;
  /** How long to wait for each process to become ready. */
  readonly readyTimeoutMs?: number;
  /**
   * Every process in a process group of its own, so a terminal's Ctrl-C reaches only this process, which
   * then stops them in order (gateway, workers, selector and index, NATS). If this process exits without
   * stopping them, they are killed on its way out.
   */
  readonly detached?: boolean;
}

export class LocalCluster implements AsyncDisposable {
  readonly workers: ClusterProcess[] = [];
  /** Workers serving only the re-ranker (rerankerPath). */
  readonly rerankers: ClusterProcess[] = [];
  readonly embedders: ClusterProcess[] = [];
  index!: ClusterProcess;
  selector!: ClusterProcess;
  /** The first gateway (the one `gatewayAddress` names). */
  gateway!: ClusterProcess;
  readonly gateways: ClusterProcess[] = [];
  /** host:port of the first gateway's gRPC server. */
  gatewayAddress = "";
  /** host:port of every gateway, in start order. */
  readonly gatewayAddresses: string[] = [];
  readonly modelId: string;
  /** The re-ranker id, when the cluster has one. */
  readonly rerankerId: string | undefined;
  readonly passwords: Readonly<Record<Role, string>>;
  #nextWorker = 0;
  #nextGateway = 0;
  #stopping: Promise<void> | undefined;

  private constructor(
    readonly nats: NatsServer,
    readonly options: LocalClusterOptions,
    passwords: Readonly<Record<Role, string>>,
  ) {
    this.passwords = passwords;
    this.modelId = options.modelId ?? modelIdOf(options.modelPath);
    this.rerankerId = options.rerankerPath !== undefined ? (options.rerankerId ?? modelIdOf(options.rerankerPath)) : undefined;
  }

  get url(): string {
    return this.nats.url;
  }

  static async start(options: LocalClusterOptions): Promise<LocalCluster> {
    if (!Number.isInteger(options.workers) || options.workers < 1) throw new CliError(`a cluster needs at least one worker, got ${options.workers}`);
    if (!existsSync(NATS_CONFIG)) throw new CliError(`the NATS configuration ${NATS_CONFIG} is missing from this checkout (restore it with \`git checkout -- deploy\`)`, 2);
    const passwords = options.passwords ?? (Object.fromEntries(ROLES.map((r) => [r, newClusterPassword()])) as Record<Role, string>);
    for (const role of ROLES) checkClusterPassword(role, passwords[role]);
    let nats: NatsServer;
    try {
      nats = await startNatsServer({
        configFile: NATS_CONFIG,
        detached: options.detached ?? false,
        env: Object.fromEntries(ROLES.map((r) => [`ATTR_RAG_${r.toUpperCase()}_PASSWORD`, passwords[r]])),
      });
    } catch (err) {
      throw new CliError(`cannot start nats-server: ${(err as Error).message}`, 2, { cause: err });
    }
    const cluster = new LocalCluster(nats, options, passwords);
    if (options.detached) process.once("exit", cluster.#killOnExit);
    const ready = options.readyTimeoutMs ?? 120_000;
    try {
      const embedder = options.embedderPath !== undefined ? ["--embedder", `gguf:${options.embedderPath}`] : [];
      cluster.index = cluster.#spawn("index", ["index", "serve", "--store", options.store, "--port", "0", "--nats", nats.url, ...cluster.credentials("index"), ...embedder]);
      cluster.selector = cluster.#spawn("selector", ["selector", "--nats", nats.url, ...cluster.credentials("selector")]);
      for (let i = 0; i < options.workers; i++) cluster.addWorker();
      if (options.rerankerPath !== undefined) for (let i = 0; i < (options.rerankerWorkers ?? 1); i++) cluster.addRerankerWorker();
      if (options.embedderPath !== undefined) for (let i = 0; i < (options.embedderWorkers ?? 1); i++) cluster.addEmbedderWorker();
      await cluster.index.waitFor(/serving the index on NATS/, ready);
      await cluster.selector.waitFor(/selector \S+ serving on/, ready);
      for (const w of cluster.workers) await w.waitFor(/worker \S+ serving model/, ready);
      for (const w of cluster.rerankers) await w.waitFor(/worker \S+ serving re-ranker/, ready);
      for (const w of cluster.embedders) await w.waitFor(/worker \S+ serving embedder/, ready);
      for (let i = 0; i < (options.gateways ?? 1); i++) await cluster.addGateway(i === 0 ? (options.gatewayPort ?? 0) : 0, ready);
      return cluster;
    } catch (err) {
      await cluster.kill();
      throw err;
    }
  }

  /** The flags that log `role` in to NATS. */
  credentials(role: Role): string[] {
    return ["--nats-user", role, "--nats-pass", this.passwords[role]];
  }

  /** Starts one more gateway and waits until it listens; returns its address. */
  async addGateway(port = 0, readyTimeoutMs = 120_000): Promise<string> {
    const name = this.#nextGateway++ === 0 ? "gateway" : `gateway-${this.#nextGateway}`;
    const g = this.#spawn(name, ["serve", "--nats", this.url, ...this.credentials("gateway"), "--model", this.modelId, ...(this.rerankerId !== undefined ? ["--reranker", this.rerankerId] : []), "--port", String(port), ...(this.options.gatewayArgs ?? [])]);
    this.gateways.push(g);
    this.gateway ??= g;
    const address = (await g.waitFor(/listening on (\S+)/, readyTimeoutMs))[1]!;
    this.gatewayAddresses.push(address);
    if (this.gatewayAddress === "") this.gatewayAddress = address;
    return address;
  }

  /** Starts one more worker (wait for /serving model/ on it before counting on it). */
  addWorker(): ClusterProcess {
    const name = `worker-${++this.#nextWorker}`;
    const w = this.#spawn(name, this.#workerArgs(name, ["--model", this.options.modelPath, "--model-id", this.modelId, ...(this.options.workerArgs ?? [])]));
    this.workers.push(w);
    return w;
  }

  /** Starts one more worker serving only the re-ranker (wait for /serving re-ranker/ on it before counting on it). */
  addRerankerWorker(): ClusterProcess {
    if (this.options.rerankerPath === undefined || this.rerankerId === undefined) throw new CliError("this cluster has no re-ranker (rerankerPath)");
    const name = `reranker-${this.rerankers.length + 1}`;
    const w = this.#spawn(name, this.#workerArgs(name, ["--reranker", this.options.rerankerPath, "--reranker-id", this.rerankerId, ...threadsOf(this.options.workerArgs ?? [])]));
    this.rerankers.push(w);
    return w;
  }

  /** Starts one more worker serving only the store's embedder (wait for /serving embedder/ on it before counting on it). */
  addEmbedderWorker(): ClusterProcess {
    if (this.options.embedderPath === undefined) throw new CliError("this cluster has no embedder (embedderPath)");
    const name = `embedder-${this.embedders.length + 1}`;
    const w = this.#spawn(name, this.#workerArgs(name, ["--embedder", this.options.embedderPath, ...threadsOf(this.options.workerArgs ?? [])]));
    this.embedders.push(w);
    return w;
  }

  /** `attr-rag worker` as this cluster runs every worker: its NATS login, name, queue settings, then `serve`. */
  #workerArgs(name: string, serve: readonly string[]): string[] {
    return [
      "worker",
      "--nats",
      this.url,
      ...this.credentials("worker"),
      "--name",
      name,
      ...(this.options.ackWaitSeconds !== undefined ? ["--ack-wait", String(this.options.ackWaitSeconds)] : []),
      ...(this.options.maxDeliver !== undefined ? ["--max-deliver", String(this.options.maxDeliver)] : []),
      "--stop-grace",
      "5",
      ...serve,
    ];
  }

  get processes(): ClusterProcess[] {
    return [...this.gateways, ...this.workers, ...this.rerankers, ...this.embedders, this.selector, this.index].filter((p): p is ClusterProcess => p !== undefined);
  }

  /** Everything the processes printed (the kept part), for failure messages. */
  logs(): string {
    return this.processes.map((p) => `--- ${p.name}\n${p.stdout}${p.stderr}`).join("\n");
  }

  /** Graceful: the gateway first (no new work), then workers (finish or hand back), selector, index, NATS. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      await Promise.all(this.gateways.map((g) => g.stop("SIGTERM")));
      await Promise.all([...this.workers, ...this.rerankers, ...this.embedders].map((w) => w.stop("SIGTERM")));
      await Promise.all([this.selector?.stop("SIGTERM"), this.index?.stop("SIGTERM")]);
      await this.nats[Symbol.asyncDispose]();
      process.off("exit", this.#killOnExit);
    })();
    return this.#stopping;
  }

  /** At once: every process SIGKILLed, NATS stopped and its store removed. */
  async kill(): Promise<void> {
    await Promise.all(this.processes.map((p) => p.stop("SIGKILL")));
    await this.nats[Symbol.asyncDispose]();
    process.off("exit", this.#killOnExit);
  }

  /** Detached processes outlive their parent: on an unplanned exit, take them down (synchronously). */
  readonly #killOnExit = () => {
    for (const p of this.processes) if (p.running) p.child.kill("SIGKILL");
    const pid = this.nats.pid();
    try {
      if (pid !== undefined) process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  };

  [Symbol.asyncDispose](): Promise<void> {
    return this.kill();
  }

  #spawn(name: string, args: readonly string[]): ClusterProcess {
    return ClusterProcess.spawn(name, args, { detached: this.options.detached ?? false, ...(this.options.echo !== undefined ? { echo: this.options.echo } : {}) });
  }
}

/** The --threads flag of a worker's engine flags (a re-rank context takes no generator sizes). */
function threadsOf(args: readonly string[]): string[] {
  const i = args.indexOf("--threads");
  return i >= 0 && i + 1 < args.length ? ["--threads", args[i + 1]!] : [];
}
