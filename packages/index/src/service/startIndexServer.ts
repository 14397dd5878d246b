import { Server, ServerCredentials } from "@grpc/grpc-js";
import { addServerReflection, INDEX_SERVICE_NAME, IndexServiceService, type IndexServiceServer } from "@attr-rag/contracts";
import type { ChunkStore } from "../ChunkStore.js";
import type { QueryEmbedder } from "./context.js";
import { createIndexServiceImplementation } from "./createIndexServiceImplementation.js";
import { MESSAGE_OVERHEAD_BYTES, resolveLimits, type IndexServiceLimits } from "./limits.js";
import { listen, shutdown } from "./serverLifecycle.js";
import { grpcMetricsInterceptor } from "@attr-rag/telemetry";
import { stderrLog, type ServiceLog } from "./toGrpcStatus.js";

export interface StartIndexServerOptions {
  /** An open store. The server owns it once started: close() closes it (unless `closeStore: false`). */
  readonly store: ChunkStore;
  /** The store's embedder (queries and ingested chunks). Not disposed by the server. */
  readonly embedder: QueryEmbedder;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: a free port, reported in the handle. */
  readonly port?: number;
  readonly limits?: Partial<IndexServiceLimits>;
  /** Unexpected errors are logged here (default stderr); clients only see a reference. */
  readonly log?: ServiceLog;
  /** Close the store in close(). Default true. */
  readonly closeStore?: boolean;
  /** How long close() lets running calls finish before cancelling them. Default 5000 ms. */
  readonly shutdownGraceMs?: number;
  /**
   * Handlers for the writes instead of the store's own: a replica of a replicated index sends them into the
   * ingest log (its store changes only through the log).
   */
  readonly writes?: Pick<IndexServiceServer, "ingestDocuments" | "deleteDocument">;
}

export interface IndexServerHandle extends AsyncDisposable {
  /** "host:port" as bound, for a client (IPv6 hosts in brackets). */
  readonly address: string;
  readonly host: string;
  readonly port: number;
  readonly server: Server;
  /** Stops accepting calls, lets running ones finish (then cancels them), closes the store. Repeat-safe. */
  close(): Promise<void>;
}

/** Starts a grpc-js server (insecure credentials) serving IndexService over `store`, with server reflection. */
export async function startIndexServer(options: StartIndexServerOptions): Promise<IndexServerHandle> {
  const { store, embedder, host = "127.0.0.1", port = 0, log = stderrLog, closeStore = true, shutdownGraceMs = 5_000 } = options;
  const limits = resolveLimits(options.limits);
  const server = new Server({
    // Large enough for one document at the limit with its title and metadata; a bigger message is
    // RESOURCE_EXHAUSTED from grpc-js before it is buffered whole.
    "grpc.max_receive_message_length": limits.maxDocumentBytes + MESSAGE_OVERHEAD_BYTES,
    interceptors: [grpcMetricsInterceptor()],
  });
  server.addService(IndexServiceService, { ...createIndexServiceImplementation(store, embedder, limits, log), ...options.writes });
  addServerReflection(server, [INDEX_SERVICE_NAME]);
  const bound = await listen(server, host, port, ServerCredentials.createInsecure(), "index server");

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await shutdown(server, shutdownGraceMs);
      if (closeStore) await store.close();
    })();
    return closing;
  };
  return { address: bound.address, host, port: bound.port, server, close, [Symbol.asyncDispose]: close };
}
