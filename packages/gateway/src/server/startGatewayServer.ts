import { readFileSync } from "node:fs";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import {
  addServerReflection,
  ATTR_RAG_SERVICE_NAME,
  AttrRagServiceService,
  BATCH_SERVICE_NAME,
  BatchServiceService,
  HEALTH_SERVICE_NAME,
  INDEX_SERVICE_NAME,
  IndexServiceService,
} from "@attr-rag/contracts";
import { createIndexServiceImplementation, DEFAULT_INDEX_SERVICE_LIMITS, listen, shutdown, type ServiceLog } from "@attr-rag/index";
import { HealthImplementation } from "grpc-health-check";
import { BatchRunner } from "../batch/BatchRunner.js";
import type { BatchStore } from "../batch/batchStore.js";
import { openBatchStore } from "../batch/openBatchStore.js";
import { MAX_AUTO_BATCH_CONCURRENCY, WorkerBasedConcurrency } from "../batch/workerBasedConcurrency.js";
import { batchConcurrencyOf } from "../config/gatewayConfig.js";
import type { Runtime } from "../runtime/Runtime.js";
import { Admission } from "./admission.js";
import { askHandler } from "./askHandler.js";
import { attributeHandler } from "./attributeHandler.js";
import { batchServiceImplementation } from "./batch/batchServiceImplementation.js";
import type { ServerContext } from "./serverContext.js";
import { withBearer } from "./withBearer.js";

export interface StartGatewayServerOptions {
  /** Opened resources; the server owns them once started: close() disposes them (unless `disposeRuntime: false`). */
  readonly runtime: Runtime;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Default 0: a free port, reported in the handle. */
  readonly port?: number;
  readonly log?: ServiceLog;
  readonly disposeRuntime?: boolean;
  /** How long close() lets running calls finish before cancelling them. Default 5000 ms. */
  readonly shutdownGraceMs?: number;
}

export interface GatewayServerHandle extends AsyncDisposable {
  /** "host:port" as bound (IPv6 hosts in brackets). */
  readonly address: string;
  readonly port: number;
  readonly tls: boolean;
  readonly admission: Admission;
  readonly health: HealthImplementation;
  /** Where this gateway's batches live, and the runner that runs their items (undefined with batchConcurrency 0). */
  readonly batches: BatchStore;
  readonly batchRunner: BatchRunner | undefined;
  /** Reports NOT_SERVING, stops accepting calls, lets running ones finish (then cancels them). Repeat-safe. */
  close(): Promise<void>;
}

const stderrLog: ServiceLog = (line) => process.stderr.write(`${line}\n`);

/**
 * The gateway: AttrRagService (Ask, Attribute), BatchService, IndexService over the same store (embedded),
 * grpc.health.v1 and server reflection, on one port, with TLS and a bearer token when the runtime's config
 * asks for them. Health and reflection need no token (load balancers and grpcurl probe them). It runs batch
 * items too: a runner takes them from the batch store (SQLite embedded, JetStream distributed).
 */
export async function startGatewayServer(options: StartGatewayServerOptions): Promise<GatewayServerHandle> {
  const { runtime, host = "127.0.0.1", port = 0, log = stderrLog, disposeRuntime = true, shutdownGraceMs = 5_000 } = options;
  const config = runtime.config;
  const credentials =
    config.tlsCert !== undefined && config.tlsKey !== undefined
      ? ServerCredentials.createSsl(null, [{ cert_chain: readPem(config.tlsCert, "tlsCert"), private_key: readPem(config.tlsKey, "tlsKey") }], false)
      : ServerCredentials.createInsecure();
  // A CreateBatch carries all its items in one message.
  const server = new Server({ "grpc.max_receive_message_length": Math.max(config.maxMessageBytes, DEFAULT_INDEX_SERVICE_LIMITS.maxDocumentBytes + 1024 * 1024) });
  const admission = new Admission(config.maxConcurrentAsks, config.maxQueuedAsks);
  const ctx: ServerContext = { runtime, admission, log };
  server.addService(AttrRagServiceService, { ask: askHandler(ctx), attribute: attributeHandler(ctx) });
  const batches = await openBatchStore(runtime, log);
  server.addService(BatchServiceService, withBearer(batchServiceImplementation({ store: batches, maxBatchItems: config.maxBatchItems, log }), config.authToken));
  // Embedded, the store is here and IndexService serves it too; distributed, the index service holds it.
  const services = runtime.local !== undefined ? [ATTR_RAG_SERVICE_NAME, BATCH_SERVICE_NAME, INDEX_SERVICE_NAME] : [ATTR_RAG_SERVICE_NAME, BATCH_SERVICE_NAME];
  if (runtime.local !== undefined) {
    server.addService(IndexServiceService, withBearer(createIndexServiceImplementation(runtime.local.store, runtime.local.embedder, {}, log), config.authToken));
  }
  const health = new HealthImplementation(Object.fromEntries(["", ...services].map((name) => [name, "SERVING" as const])));
  health.addToServer(server);
  addServerReflection(server, [...services, HEALTH_SERVICE_NAME]);

  let bound;
  try {
    bound = await listen(server, host, port, credentials, "gateway");
  } catch (err) {
    await batches.close();
    throw err;
  }
  // Distributed with no batchConcurrency set, the runner follows the workers' slots (WorkerBasedConcurrency).
  const auto = config.batchConcurrency === undefined && runtime.nats !== undefined ? new WorkerBasedConcurrency(runtime.nats.connection, config.model) : undefined;
  const concurrency = auto !== undefined ? () => auto.value : batchConcurrencyOf(config);
  const batchRunner =
    auto !== undefined || batchConcurrencyOf(config) > 0
      ? new BatchRunner({ queue: batches.queue, pipeline: runtime.batchPipeline, concurrency, maxConcurrency: auto !== undefined ? MAX_AUTO_BATCH_CONCURRENCY : undefined, log }).start()
      : undefined;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      for (const name of ["", ...services]) health.setStatus(name, "NOT_SERVING");
      // Running batch items go back to the queue unfinished; the next runner (here after a restart, or another gateway) runs them.
      auto?.close();
      await batchRunner?.stop();
      await shutdown(server, shutdownGraceMs);
      await batches.close();
      if (disposeRuntime) await runtime.dispose();
    })();
    return closing;
  };
  return { address: bound.address, port: bound.port, tls: config.tlsCert !== undefined, admission, health, batches, batchRunner, close, [Symbol.asyncDispose]: close };
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(`gateway: cannot read ${what} ${path}: ${(err as Error).message}`, { cause: err });
  }
}
