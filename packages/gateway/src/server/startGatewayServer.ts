import { readFileSync } from "node:fs";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import {
  addServerReflection,
  ATTR_RAG_SERVICE_NAME,
  AttrRagServiceService,
  BATCH_SERVICE_NAME,
  BatchServiceService,
  CLUSTER_SERVICE_NAME,
  ClusterServiceService,
  HEALTH_SERVICE_NAME,
  INDEX_SERVICE_NAME,
  IndexServiceService,
} from "@attr-rag/contracts";
import { createIndexServiceImplementation, createIndexServiceOverNats, DEFAULT_INDEX_SERVICE_LIMITS, listen, shutdown, type ServiceLog } from "@attr-rag/index";
import { HealthImplementation } from "grpc-health-check";
import {
  JetStreamBatchStore,
  JetStreamWebhookSender,
  MAX_AUTO_BATCH_CONCURRENCY,
  SqliteBatchStore,
  WebhookDeliverer,
  webhookSetup,
  WorkerBasedConcurrency,
  type BatchRunner,
  type BatchStore,
} from "@attr-rag/batch";
import { pipelineBatchRunner } from "../runtime/pipelineBatchRunner.js";
import { openBatchStore } from "./openBatchStore.js";
import { batchConcurrencyOf } from "../config/gatewayConfig.js";
import type { Runtime } from "../runtime/Runtime.js";
import { Admission } from "./admission.js";
import { StoppedCalls } from "./stoppedCalls.js";
import { askHandler } from "./askHandler.js";
import { attributeHandler } from "./attributeHandler.js";
import { batchServiceImplementation } from "./batch/batchServiceImplementation.js";
import { clusterServiceImplementation } from "./cluster/clusterServiceImplementation.js";
import type { ServerContext } from "./serverContext.js";
import { bearerInterceptor } from "./bearerInterceptor.js";
import { withBearer } from "./withBearer.js";
import { ServiceTable } from "../http/serviceTable.js";
import { grpcMetricsInterceptor, lineLog } from "@attr-rag/telemetry";
import { engineSources } from "@attr-rag/worker";
import { storeSources } from "@attr-rag/index";
import { admissions } from "../metrics/admissionMetrics.js";
import { queueConnections } from "../metrics/queueMetrics.js";
import { isLoopbackName } from "../http/requestGuard.js";
import { startHttpFace, type HttpFace } from "../http/startHttpFace.js";

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
  /** Serve the HTTP/JSON face (Connect protocol) and the web console on this port too (0: a free one). Default: none. */
  readonly httpPort?: number;
  /** The web console's built files (packages/web/dist), served at "/" of the HTTP port. */
  readonly consoleDir?: string;
  /** Origins allowed to call the HTTP port cross-origin ("*": any). Default: none (closed). */
  readonly corsOrigins?: readonly string[];
  /** HTTP port without a token: host names besides loopback ones that requests may name (e.g. a proxy's). */
  readonly allowedHosts?: readonly string[];
}

export interface GatewayServerHandle extends AsyncDisposable {
  /** "host:port" as bound (IPv6 hosts in brackets). */
  readonly address: string;
  readonly port: number;
  readonly tls: boolean;
  /** The HTTP face's "host:port" and port, when httpPort was given. */
  readonly http: { readonly address: string; readonly port: number } | undefined;
  readonly admission: Admission;
  /** Calls aborted while they ran (client gone, deadline passed), and how long their work took to stop. */
  readonly stopped: StoppedCalls;
  readonly health: HealthImplementation;
  /** Where this gateway's batches live, and the runner that runs their items (undefined with batchConcurrency 0). */
  readonly batches: BatchStore;
  readonly batchRunner: BatchRunner | undefined;
  /** Reports NOT_SERVING, stops accepting calls, lets running ones finish (then cancels them). Repeat-safe. */
  close(): Promise<void>;
}

const stderrLog: ServiceLog = lineLog("gateway");

/**
 * The gateway: AttrRagService (Ask, Attribute), BatchService, IndexService over the same store (embedded),
 * grpc.health.v1 and server reflection, on one port (and, with httpPort, the same services over HTTP/JSON plus
 * the web console on a second), with TLS and a bearer token when the runtime's config
 * asks for them. Health and reflection need no token (load balancers and grpcurl probe them). It runs batch
 * items too: a runner takes them from the batch store (SQLite embedded, JetStream distributed).
 */
export async function startGatewayServer(options: StartGatewayServerOptions): Promise<GatewayServerHandle> {
  const { runtime, host = "127.0.0.1", port = 0, log = stderrLog, disposeRuntime = true, shutdownGraceMs = 5_000, httpPort } = options;
  const config = runtime.config;
  if (httpPort !== undefined) refuseOpenHttpFace(host, config.authToken);
  const tls =
    config.tlsCert !== undefined && config.tlsKey !== undefined
      ? { cert: readPem(config.tlsCert, "tlsCert"), key: readPem(config.tlsKey, "tlsKey") }
      : undefined;
  const credentials = tls !== undefined ? ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }], false) : ServerCredentials.createInsecure();
  // A CreateBatch carries all its items in one message.
  // The token is checked on a call's metadata, before its message is read (bearerInterceptor). At most 100
  // calls at once per connection; a connection with no call for 5 min is closed, and a peer is pinged every
  // 2 min so a dead one does not hold its connection.
  const server = new Server({
    "grpc.max_receive_message_length": Math.max(config.maxMessageBytes, DEFAULT_INDEX_SERVICE_LIMITS.maxDocumentBytes + 1024 * 1024),
    "grpc.max_concurrent_streams": 100,
    "grpc.max_connection_idle_ms": 300_000,
    "grpc.keepalive_time_ms": 120_000,
    "grpc.keepalive_timeout_ms": 20_000,
    // Metrics first: it wraps the call the bearer check answers on, so refusals are counted too.
    interceptors: [grpcMetricsInterceptor(), bearerInterceptor(config.authToken)],
  });
  const admission = new Admission(config.maxConcurrentAsks, config.maxQueuedAsks);
  // What /metrics reads at scrape time: this gateway's admission queue and, distributed, its job queues.
  const unregister = [
    admissions.add(admission),
    ...(runtime.nats !== undefined ? [queueConnections.add(runtime.nats.connection)] : []),
    ...(runtime.local !== undefined ? [engineSources.add({ engine: runtime.local.generator, model: runtime.backends.modelId }), storeSources.add(runtime.local.store)] : []),
  ];
  const stopped = new StoppedCalls(log);
  const ctx: ServerContext = { runtime, admission, stopped, log };
  // One implementation of each service, served on the gRPC port and (bridged) on the HTTP port.
  const table = new ServiceTable();
  table.addService(AttrRagServiceService, { ask: askHandler(ctx), attribute: attributeHandler(ctx) });
  const webhooks = webhookSetup(config);
  const batches = await openBatchStore(runtime, log);
  table.addService(
    BatchServiceService,
    withBearer(batchServiceImplementation({ store: batches, maxBatchItems: config.maxBatchItems, webhooks: "unavailable" in webhooks ? webhooks : { allowedHosts: webhooks.allowedHosts }, log }), config.authToken),
  );

  table.addService(ClusterServiceService, withBearer(clusterServiceImplementation(runtime, admission, log), config.authToken));
  // IndexService at the same address in both modes: embedded over the store here, distributed forwarded to
  // the index over NATS.
  const services = [ATTR_RAG_SERVICE_NAME, BATCH_SERVICE_NAME, CLUSTER_SERVICE_NAME, INDEX_SERVICE_NAME];
  const indexService =
    runtime.local !== undefined
      ? createIndexServiceImplementation(runtime.local.store, runtime.local.embedder, {}, log)
      : createIndexServiceOverNats(runtime.nats!.index, runtime.nats!.connection, {}, log);
  table.addService(IndexServiceService, withBearer(indexService, config.authToken));
  const health = new HealthImplementation(Object.fromEntries(["", ...services].map((name) => [name, "SERVING" as const])));
  health.addToServer(table as unknown as Server);
  for (const { definition, implementation } of table.services) server.addService(definition, implementation);
  addServerReflection(server, [...services, HEALTH_SERVICE_NAME]);

  let bound;
  try {
    bound = await listen(server, host, port, credentials, "gateway");
  } catch (err) {
    await batches.close();
    throw err;
  }
  let http: HttpFace | undefined;
  if (httpPort !== undefined) {
    try {
      http = await startHttpFace({ table, host, port: httpPort, tls, maxBodyBytes: config.maxMessageBytes, corsOrigins: options.corsOrigins, consoleDir: options.consoleDir, authToken: config.authToken, allowedHosts: options.allowedHosts, batches, log });
    } catch (err) {
      await shutdown(server, 0);
      await batches.close();
      throw err;
    }
  }
  // Distributed with no batchConcurrency set, the runner follows the workers' slots (WorkerBasedConcurrency).
  const auto = config.batchConcurrency === undefined && runtime.nats !== undefined ? new WorkerBasedConcurrency(runtime.nats.connection, config.model) : undefined;
  const concurrency = auto !== undefined ? () => auto.value : batchConcurrencyOf(config);
  const batchRunner =
    auto !== undefined || batchConcurrencyOf(config) > 0
      ? pipelineBatchRunner(runtime, { queue: batches.queue, concurrency, maxConcurrency: auto !== undefined ? MAX_AUTO_BATCH_CONCURRENCY : undefined, log }).start()
      : undefined;

  // Embedded: events queued in batches.sqlite as batches end, delivered from there (after a restart too).
  // Distributed: queued in JetStream by whichever gateway sees the batch end, delivered by one gateway at a time.
  const sending = "key" in webhooks ? { key: webhooks.key, allowedHosts: webhooks.allowedHosts, retryForMs: config.webhookRetryFor * 1000, backoffMs: config.webhookBackoffMs, attemptTimeoutMs: config.webhookAttemptTimeoutMs } : undefined;
  const deliverer =
    sending === undefined
      ? undefined
      : batches instanceof SqliteBatchStore
        ? new WebhookDeliverer({ ...sending, outbox: batches, log }).start()
        : batches instanceof JetStreamBatchStore
          ? new JetStreamWebhookSender({ ...sending, store: batches, ackWaitMs: config.batchAckWait * 1000, log }).start()
          : undefined;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      for (const name of ["", ...services]) health.setStatus(name, "NOT_SERVING");
      for (const remove of unregister) remove();
      // Running batch items go back to the queue unfinished; the next runner (here after a restart, or another gateway) runs them.
      auto?.close();
      await batchRunner?.stop();
      await Promise.all([shutdown(server, shutdownGraceMs), http?.close(shutdownGraceMs), deliverer?.stop()]);
      await batches.close();
      if (disposeRuntime) await runtime.dispose();
    })();
    return closing;
  };
  const httpAddress = http !== undefined ? { address: http.address, port: http.port } : undefined;
  return { address: bound.address, port: bound.port, tls: tls !== undefined, http: httpAddress, admission, stopped, health, batches, batchRunner, close, [Symbol.asyncDispose]: close };
}

/**
 * The HTTP face answers browsers, and a browser runs any page's script: without a token only this machine may
 * reach it. Bound elsewhere it must have one.
 */
function refuseOpenHttpFace(host: string, token: string | undefined): void {
  const name = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (token === undefined && !isLoopbackName(name.toLowerCase())) {
    throw new Error(`gateway: refusing to serve HTTP on ${host} without an auth token: any web page a user opens could call it; set authToken (--auth-token or ATTR_RAG_AUTH_TOKEN) or bind the HTTP port to 127.0.0.1`);
  }
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(`gateway: cannot read ${what} ${path}: ${(err as Error).message}`, { cause: err });
  }
}
