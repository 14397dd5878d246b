import type { Command } from "commander";
import type { IndexServiceServer } from "@attr-rag/contracts";
import { ChunkStore, createIndexServiceOverNats, DEFAULT_LAG_LIMITS, LocalIndex, LogTrimmedError, serveIndexOverNats, startEmbedder, startIndexReplica, startIndexServer, storeErrorAsInput, StoreNotFoundError, storeSources, UnknownLogEntryError, type Embedder, type IndexReplica, type IndexServerHandle } from "@attr-rag/index";
import { ConnectionWatch, type NatsConnection, type Service } from "@attr-rag/nats";
import { NatsEngine, WorkerEmbedder } from "@attr-rag/worker";
import { CliError } from "../cliError.js";
import { addNatsOptions, connectNatsCli, natsOptions, type NatsFlags } from "../natsCli.js";
import { cliShardSpec, nonNegativeInt, positiveInt, positiveNumber } from "../parseArgs.js";
import { parsePort, untilSignal } from "../serverCli.js";
import { lineLog, logger, withoutCredentials } from "@attr-rag/telemetry";

interface IndexServeOptions extends NatsFlags {
  store: string;
  host: string;
  port: string;
  embedder: string;
  create?: boolean;
  searchThreads: string;
  shard?: string;
  embedThreads?: string;
  maxLagEntries: string;
  maxLagSeconds: string;
}

/**
 * `attr-rag index serve`: the gRPC IndexService (attr_rag.v1) over one store until SIGINT/SIGTERM, then
 * a clean stop (running calls finish, the vector file is saved, the store is closed and unlocked).
 * Registered under an `index` command group, created here unless the program already has one.
 */
export function registerIndexServeCommand(program: Command): void {
  const group =
    program.commands.find((c) => c.name() === "index") ??
    program.command("index").summary("index commands (serve the store over gRPC)").description("Commands that work on one index store.");
  const serve = group
    .command("serve")
    .summary("serve a store as the gRPC IndexService")
    .description(
      [
        "Serves attr_rag.v1.IndexService (IngestDocuments, Search, GetChunks, DeleteDocument, GetStats) over the store",
        "in --store with insecure credentials, prints `listening on HOST:PORT` once it accepts calls, and runs until",
        "SIGINT or SIGTERM; it then lets running calls finish (up to 5 s), saves the vectors and closes the store.",
        "The embedder embeds ingested documents and queries and must be the one that built the store.",
        "With --nats it also answers the same operations on NATS (the attr-rag-index service, in its queue group),",
        "for the distributed gateway and the selector; with a GGUF embedder, ingest and query embedding then go to the",
        "workers serving it (`attr-rag worker --embedder`), ingest in the batch lane, and stay here while none does.",
      ].join("\n"),
    )
    .requiredOption("--store <dir>", "store directory (made by attr-rag ingest, or with --create)")
    .option("--host <host>", "address to bind", "127.0.0.1")
    .option("--port <n>", "port to bind, 0 for a free one", "50051")
    .option("--embedder <spec>", "use-lite | gguf:/path/to/model.gguf (must match the store's)", "use-lite")
    .option("--create", "create an empty store when --store has none")
    .option("--search-threads <n>", "threads BM25 searches run on, off the event loop (0: on it)", "2")
    .option("--embed-threads <n>", "CPU threads of a GGUF embedder in this process (default: all cores; several index processes on one machine should share them)")
    .option("--shard <i/S>", "with --nats: serve shard i of a sharded index of S shards (the gateway's --index-shards S)")
    .option("--max-lag-entries <n>", "with --shard: leave the shard's queue group while more than this many log entries are not applied", String(DEFAULT_LAG_LIMITS.entries))
    .option("--max-lag-seconds <s>", "with --shard: leave the shard's queue group while the oldest entry not applied is older than this", String(DEFAULT_LAG_LIMITS.seconds));
  addNatsOptions(serve, false).action(async (o: IndexServeOptions) => {
    const port = parsePort(o.port);
    const searchThreads = Number(o.searchThreads);
    if (!Number.isInteger(searchThreads) || searchThreads < 0 || searchThreads > 64) throw new CliError(`--search-threads must be an integer from 0 to 64, got ${JSON.stringify(o.searchThreads)}`, 2);
    if (o.host.trim() === "") throw new CliError("--host is empty");
    const shard = o.shard === undefined ? undefined : cliShardSpec(o.shard);
    const maxLag = { entries: nonNegativeInt("--max-lag-entries", o.maxLagEntries), seconds: positiveNumber("--max-lag-seconds", o.maxLagSeconds) };
    const embedThreads = o.embedThreads === undefined ? undefined : positiveInt("--embed-threads", o.embedThreads);
    const embedder: Embedder = await startEmbedder(o.embedder, embedThreads);
    let server: IndexServerHandle | undefined;
    let store: ChunkStore | undefined;
    let nc: NatsConnection | undefined;
    let natsService: Service | undefined;
    let replica: IndexReplica | undefined;
    let unregisterStore: (() => void) | undefined;
    try {
      store = await ChunkStore.open(o.store, {
        create: o.create ?? false,
        embedder: { id: embedder.id, dimensions: embedder.dimensions },
        embed: (texts) => embedder.embed(texts),
      }).catch((err: unknown) => {
        if (err instanceof StoreNotFoundError) {
          throw new CliError(`no store at ${o.store}; build one with \`attr-rag ingest --store ${o.store} FILE...\`, or add --create to serve an empty one`, 2, { cause: err });
        }
        throw storeErrorAsInput(err);
      });
      // A shard's store answers for its shard only: served as a whole index it would be one.
      if (shard === undefined) {
        try {
          store.replica.assertUnsharded("serving it without --shard", store.path, "Serve it with --nats URL --shard {shard}.");
        } catch (err) {
          throw storeErrorAsInput(err);
        }
      }
      if (searchThreads > 0) await store.useSearchThreads(searchThreads);
      unregisterStore = storeSources.add(store);
      const nats = natsOptions(o, `attr-rag-index-${process.pid}`);
      if (shard !== undefined && nats === undefined) throw new CliError("--shard needs --nats: a shard is one part of an index the gateway reaches over NATS", 2);
      // With NATS, a GGUF embedder's work goes to the workers serving it (its own process is the fallback).
      let served: Embedder = embedder;
      if (nats !== undefined) {
        nc = await connectNatsCli(nats);
        if (embedder.id.startsWith("gguf:")) served = new WorkerEmbedder(embedder, await NatsEngine.connect(nc, new ConnectionWatch(nc)), nc);
      }
      const log = lineLog("index");
      let writes: Pick<IndexServiceServer, "ingestDocuments" | "deleteDocument"> | undefined;
      if (nc !== undefined) {
        const ctx = new LocalIndex(store, served).context;
        if (shard === undefined) natsService = await serveIndexOverNats(nc, ctx);
        else {
          // Caught up with the shard's ingest log before answering anything.
          replica = await startIndexReplica(nc, ctx, shard, { log, maxLag }).catch((err: unknown) => {
            if (err instanceof LogTrimmedError || err instanceof UnknownLogEntryError) throw new CliError(err.message, 2, { cause: err });
            throw storeErrorAsInput(err);
          });
          const forward = createIndexServiceOverNats(replica.writes, nc);
          writes = { ingestDocuments: forward.ingestDocuments, deleteDocument: forward.deleteDocument };
        }
        log(`serving the index${shard === undefined ? "" : ` (shard ${shard.shard} of ${shard.shards}, replica ${store.replica.id}, ingest log applied up to ${store.replica.applied})`} on NATS at ${withoutCredentials(nats!.url)}`);
      }
      server = await startIndexServer({ store, embedder: served, host: o.host, port, ...(writes !== undefined ? { writes } : {}) }).catch((err: unknown) => {
        throw new CliError((err as Error).message, 1, { cause: err });
      });
      const stopped = untilSignal();
      process.stdout.write(`listening on ${server.address}\n`);
      const signal = await stopped;
      logger("index").info(`${signal}: stopping the index server`);
      // The gRPC calls let finish may still embed on the workers: NATS goes last.
      await natsService?.stop();
      await replica?.stop();
      await server.close();
      await nc?.drain().catch(() => nc?.close());
      logger("index").info(`stopped; store ${store.path} closed`);
    } finally {
      unregisterStore?.();
      await replica?.stop();
      await nc?.close().catch(() => {});
      await server?.close();
      await store?.close();
      await embedder.dispose();
    }
  });
}
