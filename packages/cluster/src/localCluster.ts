// A whole distributed Attr-RAG on this machine: nats-server (from PATH, with deploy/nats/nats-server.conf's
// per-role users), `attr-rag index serve --nats`, N `attr-rag worker`s, `attr-rag selector` and
// `attr-rag serve --nats`, each a process of its own with its own role's credentials. What
// `deploy/local/cluster` runs, what `attr-rag bench cluster` measures and what the distributed tests start.
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { IngestDocumentsRequest } from "@attr-rag/contracts";
import { InputError, shardOf } from "@attr-rag/core";
import { readDocuments, ShardedNatsIndex } from "@attr-rag/index";
import { connectNats, startNatsServer, type NatsServer } from "@attr-rag/nats";
import { modelIdOf } from "@attr-rag/worker";
import { checkClusterPassword, newClusterPassword } from "./clusterPasswords.js";
import { ClusterProcess } from "./clusterProcess.js";

export const NATS_CONFIG = fileURLToPath(new URL("../../../deploy/nats/nats-server.conf", import.meta.url));

export const ROLES = ["gateway", "worker", "selector", "index"] as const;
export type Role = (typeof ROLES)[number];

export interface LocalClusterOptions {
  /**
   * Chunk store the index service opens (made by attr-rag ingest). With indexShards, the directory holding
   * every replica's store (`shard-<i>-of-<S>/replica-<r>`, created empty and filled from the ingest log).
   */
  readonly store: string;
  /**
   * A replicated index: this many shards (`index serve --shard i/S`, the gateway's and the selector's
   * --index-shards S), each served by indexReplicas processes fed by the ingest log. Unset: one index process
   * over `store`.
   */
  readonly indexShards?: number;
  /** Replicas per shard with indexShards. Default 1. */
  readonly indexReplicas?: number;
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
  /** Every process serves Prometheus metrics on a free port of its own (--metrics-port 0): see metricsTargets(). */
  readonly metrics?: boolean;
  /** Every process's log format (--log-format); default: theirs (JSON, as their stderr is a pipe). */
  readonly logFormat?: "pretty" | "json";
  /** Extra environment of every process (e.g. OTEL_EXPORTER_OTLP_ENDPOINT to export traces). */
  readonly env?: Readonly<Record<string, string>>;
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
  /** The index process (unsharded), or the first replica of shard 0. */
  index!: ClusterProcess;
  /** Every index process: replicas of each shard in turn (one, unsharded). */
  readonly indexes: ClusterProcess[] = [];
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
  /** How each process was started, so that restart() can start it again the same way. */
  readonly #started = new Map<ClusterProcess, { name: string; args: readonly string[] }>();
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
    if (!Number.isInteger(options.workers) || options.workers < 1) throw new InputError(`a cluster needs at least one worker, got ${options.workers}`);
    if (options.indexReplicas !== undefined && options.indexShards === undefined) throw new InputError("index replicas need a sharded index: give the shard count too (1 for one shard)", 2);
    if (!existsSync(NATS_CONFIG)) throw new InputError(`the NATS configuration ${NATS_CONFIG} is missing from this checkout (restore it with \`git checkout -- deploy\`)`, 2);
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
      throw new InputError(`cannot start nats-server: ${(err as Error).message}`, 2, { cause: err });
    }
    const cluster = new LocalCluster(nats, options, passwords);
    if (options.detached) process.once("exit", cluster.#killOnExit);
    const ready = options.readyTimeoutMs ?? 120_000;
    try {
      if (options.indexShards === undefined) {
        cluster.index = cluster.#spawn("index", cluster.#indexArgs(options.store, undefined));
        cluster.indexes.push(cluster.index);
      } else {
        for (let shard = 0; shard < options.indexShards; shard++) {
          for (let r = 1; r <= (options.indexReplicas ?? 1); r++) cluster.addIndexReplica(shard, r);
        }
        cluster.index = cluster.indexes[0]!;
      }
      cluster.selector = cluster.#spawn("selector", ["selector", "--nats", nats.url, ...cluster.credentials("selector"), ...cluster.#indexShardsArgs()]);
      for (let i = 0; i < options.workers; i++) cluster.addWorker();
      if (options.rerankerPath !== undefined) for (let i = 0; i < (options.rerankerWorkers ?? 1); i++) cluster.addRerankerWorker();
      if (options.embedderPath !== undefined) for (let i = 0; i < (options.embedderWorkers ?? 1); i++) cluster.addEmbedderWorker();
      for (const ix of cluster.indexes) await ix.waitFor(/serving the index.* on NATS/, ready);
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

  /** Starts one more gateway (with `extraArgs` of its own, e.g. --http-port) and waits until it listens; returns its address. */
  async addGateway(port = 0, readyTimeoutMs = 120_000, extraArgs: readonly string[] = []): Promise<string> {
    const name = this.#nextGateway++ === 0 ? "gateway" : `gateway-${this.#nextGateway}`;
    const g = this.#spawn(name, ["serve", "--nats", this.url, ...this.credentials("gateway"), ...this.#indexShardsArgs(), "--model", this.modelId, ...(this.rerankerId !== undefined ? ["--reranker", this.rerankerId] : []), "--port", String(port), ...(this.options.gatewayArgs ?? []), ...extraArgs]);
    this.gateways.push(g);
    this.gateway ??= g;
    const address = (await g.waitFor(/listening on (\S+)/, readyTimeoutMs))[1]!;
    this.gatewayAddresses.push(address);
    if (this.gatewayAddress === "") this.gatewayAddress = address;
    return address;
  }

  /**
   * Starts replica `replica` (from 1) of shard `shard` over its own store (created empty: it catches up from
   * the ingest log); wait for /serving the index/ on it before counting on it.
   */
  addIndexReplica(shard: number, replica: number): ClusterProcess {
    const shards = this.options.indexShards;
    if (shards === undefined) throw new InputError("this cluster's index is not sharded (indexShards)");
    const store = join(this.options.store, `shard-${shard}-of-${shards}`, `replica-${replica}`);
    const p = this.#spawn(`index-${shard}.${replica}`, [...this.#indexArgs(store, `${shard}/${shards}`), "--create"]);
    this.indexes.push(p);
    return p;
  }

  /**
   * A corpus into the ingest log of the replicated index, as the gateway writes it (with the gateway's NATS
   * login), and applied by every replica: each shard's last document is sent again waiting for all its
   * replicas (UNCHANGED, and after every earlier entry of the shard, which replicas apply in order). Returns
   * the documents ingested.
   */
  async ingestThroughLog(corpus: string): Promise<number> {
    const shards = this.options.indexShards;
    if (shards === undefined) throw new InputError("this cluster's index is not sharded (indexShards)");
    const nc = await connectNats({ url: this.url, name: "attr-rag-cluster-ingest", user: "gateway", pass: this.passwords.gateway });
    try {
      const index = new ShardedNatsIndex(nc, shards);
      const signal = new AbortController().signal;
      const lastOfShard = new Map<number, IngestDocumentsRequest>();
      let n = 0;
      for await (const item of readDocuments([corpus])) {
        const d = item.document;
        const request: IngestDocumentsRequest = { document: { id: d.id, text: d.text, title: d.title ?? "", source: d.source ?? "", license: d.license ?? "", metadata: {} }, waitForReplicas: 0 };
        const r = await index.ingest(request, signal);
        if (r.failed > 0) throw new InputError(`ingesting ${d.id} through the log failed: ${r.results[0]?.message ?? ""}`);
        lastOfShard.set(shardOf(d.id, shards), request);
        n++;
      }
      for (const request of lastOfShard.values()) await index.ingest({ ...request, waitForReplicas: this.options.indexReplicas ?? 1 }, signal);
      return n;
    } finally {
      await nc.close();
    }
  }

  #indexArgs(store: string, shard: string | undefined): string[] {
    const embedder = this.options.embedderPath !== undefined ? ["--embedder", `gguf:${this.options.embedderPath}`, ...this.#embedThreads()] : [];
    return ["index", "serve", "--store", store, "--port", "0", "--nats", this.url, ...this.credentials("index"), ...embedder, ...(shard !== undefined ? ["--shard", shard] : [])];
  }

  /** Index processes share the machine's cores: each embeds on a fair share of them (llama.cpp threads spin). */
  #embedThreads(): string[] {
    const processes = this.options.indexShards === undefined ? 1 : this.options.indexShards * (this.options.indexReplicas ?? 1);
    return ["--embed-threads", String(Math.max(1, Math.floor(availableParallelism() / processes)))];
  }

  #indexShardsArgs(): string[] {
    return this.options.indexShards !== undefined ? ["--index-shards", String(this.options.indexShards)] : [];
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
    if (this.options.rerankerPath === undefined || this.rerankerId === undefined) throw new InputError("this cluster has no re-ranker (rerankerPath)");
    const name = `reranker-${this.rerankers.length + 1}`;
    const w = this.#spawn(name, this.#workerArgs(name, ["--reranker", this.options.rerankerPath, "--reranker-id", this.rerankerId, ...threadsOf(this.options.workerArgs ?? [])]));
    this.rerankers.push(w);
    return w;
  }

  /** Starts one more worker serving only the store's embedder (wait for /serving embedder/ on it before counting on it). */
  addEmbedderWorker(): ClusterProcess {
    if (this.options.embedderPath === undefined) throw new InputError("this cluster has no embedder (embedderPath)");
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
    return [...this.gateways, ...this.workers, ...this.rerankers, ...this.embedders, this.selector, ...this.indexes].filter((p): p is ClusterProcess => p !== undefined);
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
      await Promise.all([this.selector?.stop("SIGTERM"), ...this.indexes.map((ix) => ix.stop("SIGTERM"))]);
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
    const metrics = this.options.metrics ? ["--metrics-port", "0"] : [];
    const logs = this.options.logFormat !== undefined ? ["--log-format", this.options.logFormat] : [];
    const p = ClusterProcess.spawn(name, [...logs, ...args, ...metrics], {
      detached: this.options.detached ?? false,
      ...(this.options.echo !== undefined ? { echo: this.options.echo } : {}),
      ...(this.options.env !== undefined ? { env: { ...this.options.env } } : {}),
    });
    this.#started.set(p, { name, args });
    return p;
  }

  /**
   * Starts a process of this cluster that has exited (killed, crashed) again, with the arguments it had, in its
   * place in the lists above, and waits until it is ready. A gateway keeps its address only if it was given a
   * port (a free one is drawn again otherwise): give gateways that will be restarted a port of their own.
   */
  async restart(p: ClusterProcess, readyTimeoutMs = 120_000): Promise<ClusterProcess> {
    const how = this.#started.get(p);
    if (how === undefined) throw new InputError(`${p.name} is not a process of this cluster (or was restarted already)`);
    if (p.running) throw new InputError(`${p.name} is still running: stop it before restarting it`);
    const next = this.#spawn(how.name, how.args);
    this.#started.delete(p);
    const swap = (list: ClusterProcess[]) => {
      const at = list.indexOf(p);
      if (at >= 0) list[at] = next;
      return at >= 0;
    };
    let ready = /serving model|serving re-ranker|serving embedder/;
    if (swap(this.gateways)) ready = /listening on (\S+)/;
    else if (swap(this.indexes)) ready = /serving the index.* on NATS/;
    else if (this.selector === p) ready = /selector \S+ serving on/;
    else if (!swap(this.workers) && !swap(this.rerankers)) swap(this.embedders);
    if (this.selector === p) this.selector = next;
    if (this.index === p) this.index = next;
    if (this.gateway === p) this.gateway = next;
    await next.waitFor(ready, readyTimeoutMs);
    return next;
  }

  /**
   * With `metrics`: each running process's name, role and metrics address (host:port, scraped at /metrics),
   * as each printed it when it started.
   */
  async metricsTargets(timeoutMs = 10_000): Promise<{ name: string; role: Role; address: string }[]> {
    if (!this.options.metrics) throw new InputError("this cluster was started without metrics (LocalClusterOptions.metrics)");
    const roleOf = (p: ClusterProcess): Role =>
      this.gateways.includes(p) ? "gateway" : this.indexes.includes(p) ? "index" : p === this.selector ? "selector" : "worker";
    const running = this.processes.filter((p) => p.running);
    return Promise.all(running.map(async (p) => ({ name: p.name, role: roleOf(p), address: (await p.waitFor(/metrics on (\S+)\/metrics/, timeoutMs))[1]! })));
  }
}

/** The --threads flag of a worker's engine flags (a re-rank context takes no generator sizes). */
function threadsOf(args: readonly string[]): string[] {
  const i = args.indexOf("--threads");
  return i >= 0 && i + 1 < args.length ? ["--threads", args[i + 1]!] : [];
}
