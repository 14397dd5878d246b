import { availableParallelism, tmpdir } from "node:os";
import type { Command } from "commander";
import { resolveModel } from "@attr-rag/engine";
import { CliError } from "../cliError.js";
import { LocalCluster } from "@attr-rag/cluster";
import { positiveInt } from "../parseArgs.js";
import { parsePort, untilSignal } from "../serverCli.js";
import { DEMO_CORPUS, DEMO_QUESTION, demoModelPath, ingestDemoCorpus } from "./demo.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_INDEX_SHARDS } from "@attr-rag/contracts";
import { InputError } from "@attr-rag/core";

interface ClusterFlags {
  workers: string;
  store?: string;
  model?: string;
  modelId?: string;
  reranker?: string;
  rerankerId?: string;
  port: string;
  threads?: string;
  contextSize: string;
  indexShards?: string;
  indexReplicas?: string;
  quiet?: boolean;
  metrics?: boolean;
}

/** `attr-rag cluster` (what deploy/local/cluster runs): the distributed mode as local processes, until Ctrl-C. */
export function registerClusterCommand(program: Command): void {
  program
    .command("cluster")
    .summary("run the distributed mode on this machine: nats-server, index, workers, selector, gateway")
    .description(
      [
        "Starts nats-server from PATH (JetStream in a temporary directory, deploy/nats/nats-server.conf with random",
        "passwords for this run), `attr-rag index serve --nats` on --store, --workers `attr-rag worker`s on --model,",
        "`attr-rag selector` and `attr-rag serve --nats`, each a process of its own; prints the gateway address and",
        "stops them all, in order, on Ctrl-C. Without --store it uses the demo store (.cache/demo-store), ingesting",
        "the demo corpus first. With --reranker, one more worker serves that cross-encoder and the gateway re-ranks",
        "with it. Their output is shown line by line under each process's name (--quiet hides it).",
      ].join("\n"),
    )
    .option("--workers <n>", "engine workers", "2")
    .option("--store <dir>", "chunk store for the index service (default: the demo store, built if needed)")
    .option("--model <path|name>", "generator GGUF for the workers (default: the demo model)")
    .option("--model-id <id>", "the model id workers serve (default: the file name without .gguf)")
    .option("--reranker <path|name>", "GGUF cross-encoder: a re-rank worker serves it and the gateway re-ranks with it")
    .option("--reranker-id <id>", "the re-ranker id (default: the file name without .gguf)")
    .option("--port <n>", "gateway port, 0 for a free one", "50051")
    .option("--threads <n>", "engine CPU threads per worker (default: this machine's cores shared among the workers)")
    .option("--context-size <n>", "generator KV cells per worker, shared by its 4 parallel sequences", "32768")
    .option("--index-shards <n>", "split the index into this many shards (index serve --shard i/S), each with --index-replicas replicas fed by the ingest log; the demo corpus is ingested through the gateway's path")
    .option("--index-replicas <n>", "replicas of each shard (with --index-shards; default 1)")
    .option("--metrics", "every process serves Prometheus metrics on a free port; the targets are printed and written as a Prometheus file_sd file")
    .option("--quiet", "do not show the processes' output")
    .action(async (o: ClusterFlags) => {
      const workers = positiveInt("--workers", o.workers);
      const port = parsePort(o.port);
      const threads = o.threads !== undefined ? positiveInt("--threads", o.threads) : Math.max(1, Math.floor(availableParallelism() / workers));
      const contextSize = positiveInt("--context-size", o.contextSize);
      let modelPath: string;
      try {
        modelPath = o.model !== undefined ? resolveModel(o.model) : demoModelPath();
      } catch (err) {
        throw err instanceof InputError ? err : new CliError(`--model: ${(err as Error).message}`, 2, { cause: err });
      }
      let rerankerPath: string | undefined;
      try {
        rerankerPath = o.reranker !== undefined ? resolveModel(o.reranker) : undefined;
      } catch (err) {
        throw new CliError(`--reranker: ${(err as Error).message}`, 2, { cause: err });
      }
      if (o.rerankerId !== undefined && rerankerPath === undefined) throw new CliError("--reranker-id names the id of --reranker; pass --reranker PATH|NAME too");
      const indexShards = o.indexShards !== undefined ? boundedInt("--index-shards", o.indexShards, MAX_INDEX_SHARDS) : undefined;
      const indexReplicas = o.indexReplicas !== undefined ? boundedInt("--index-replicas", o.indexReplicas, 16) : undefined;
      if (indexReplicas !== undefined && indexShards === undefined) throw new CliError("--index-replicas needs --index-shards (1 for one shard with replicas)", 2);
      // A replicated index starts empty every run (its stores follow this run's ingest log), in a directory of its own.
      const sharded = indexShards !== undefined;
      const store = sharded ? (o.store ?? mkdtempSync(join(tmpdir(), "attr-rag-cluster-index-"))) : (o.store ?? ".cache/demo-store");
      if (!sharded && o.store === undefined) await ingestDemoCorpus(store, "cluster");
      process.stderr.write(`cluster: starting nats-server, index, ${workers} worker(s) (${threads} thread(s) each)${rerankerPath !== undefined ? ", a re-rank worker" : ""}, selector and gateway\n`);
      const cluster = await LocalCluster.start({
        store,
        workers,
        modelPath,
        ...(o.modelId !== undefined ? { modelId: o.modelId } : {}),
        ...(rerankerPath !== undefined ? { rerankerPath, ...(o.rerankerId !== undefined ? { rerankerId: o.rerankerId } : {}) } : {}),
        workerArgs: ["--threads", String(threads), "--context-size", String(contextSize)],
        ...(indexShards !== undefined ? { indexShards, indexReplicas: indexReplicas ?? 1 } : {}),
        gatewayPort: port,
        detached: true,
        ...(o.metrics ? { metrics: true } : {}),
        ...(o.quiet ? {} : { echo: (line: string) => process.stderr.write(`${line}\n`) }),
        // Their output is shown here: readable lines when this is a terminal (or --log-format says so).
        logFormat: (program.opts().logFormat as "pretty" | "json" | undefined) ?? (process.stderr.isTTY ? "pretty" : "json"),
      });
      // The password a new worker needs goes to a file only its owner reads, never to the terminal or a log.
      const secrets = mkdtempSync(join(tmpdir(), "attr-rag-cluster-secrets-"));
      const workerPass = join(secrets, "worker.pass");
      writeFileSync(workerPass, cluster.passwords.worker, { mode: 0o600 });
      let metricsLines: string[] = [];
      if (o.metrics) {
        const targets = await cluster.metricsTargets();
        const sd = join(secrets, "prometheus-targets.json");
        writeFileSync(sd, `${JSON.stringify(targets.map((t) => ({ targets: [t.address], labels: { job: `attr-rag-${t.role}`, instance_name: t.name } })), null, 2)}\n`);
        metricsLines = [`metrics: ${targets.map((t) => `${t.name} http://${t.address}/metrics`).join(", ")}`, `Prometheus file_sd targets: ${sd}`];
      }
      if (sharded) {
        process.stderr.write(`cluster: ingesting the demo corpus through the ingest log (${indexShards} shard(s) × ${indexReplicas ?? 1} replica(s))\n`);
        const n = await cluster.ingestThroughLog(DEMO_CORPUS);
        process.stderr.write(`cluster: ${n} documents applied by every replica of their shard\n`);
      }
      const pids = [`nats-server ${cluster.nats.pid()}`, ...cluster.processes.map((p) => `${p.name} ${p.child.pid}`)].join(", ");
      process.stdout.write(
        [
          `gateway listening on ${cluster.gatewayAddress} (model ${cluster.modelId}, ${workers} worker(s)${cluster.rerankerId !== undefined ? `, re-ranker ${cluster.rerankerId}` : ""})`,
          `NATS ${cluster.url}; more workers can join with: ATTR_RAG_NATS_PASS="$(cat ${workerPass})" npx attr-rag worker --nats ${cluster.url} --nats-user worker --model ${modelPath} --model-id ${cluster.modelId}`,
          ...metricsLines,
          `processes: ${pids}`,
          `ask with: npx attr-rag ask "${DEMO_QUESTION}" --server ${cluster.gatewayAddress}`,
          "Ctrl-C stops everything.",
          "",
        ].join("\n"),
      );
      // A gateway, index or selector that dies takes the cluster down with it: nothing could answer an Ask.
      const essential = [cluster.gateway, ...(sharded ? [] : [cluster.index]), cluster.selector].map((p) => p.exited.then((code) => ({ p, code })));
      const outcome = await Promise.race([untilSignal().then((signal) => ({ signal })), ...essential]);
      if ("signal" in outcome) process.stderr.write(`cluster: ${outcome.signal}: stopping the gateway, the workers, the selector, the index and nats-server\n`);
      else process.stderr.write(`cluster: ${outcome.p.name} exited (code ${outcome.code}); stopping the rest\n`);
      await cluster.stop();
      process.stderr.write("cluster: stopped\n");
      if (!("signal" in outcome)) throw new CliError(`${outcome.p.name} exited unexpectedly; its output is above`, 1);
    });
}

function boundedInt(name: string, value: string, max: number): number {
  const n = positiveInt(name, value);
  if (n > max) throw new CliError(`${name} must be from 1 to ${max}, got ${n}`, 2);
  return n;
}

