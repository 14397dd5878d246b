import { readFileSync } from "node:fs";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { addServerReflection, ATTR_RAG_SERVICE_NAME, AttrRagServiceService, HEALTH_SERVICE_NAME, INDEX_SERVICE_NAME, IndexServiceService } from "@attr-rag/contracts";
import { createIndexServiceImplementation, DEFAULT_INDEX_SERVICE_LIMITS, listen, shutdown, type ServiceLog } from "@attr-rag/index";
import { HealthImplementation } from "grpc-health-check";
import type { Runtime } from "../runtime/Runtime.js";
import { Admission } from "./admission.js";
import { askHandler } from "./askHandler.js";
import { attributeHandler } from "./attributeHandler.js";
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
  /** Reports NOT_SERVING, stops accepting calls, lets running ones finish (then cancels them). Repeat-safe. */
  close(): Promise<void>;
}

const stderrLog: ServiceLog = (line) => process.stderr.write(`${line}\n`);

/**
 * The gateway: AttrRagService (Ask, Attribute), IndexService over the same store, grpc.health.v1 and server
 * reflection, on one port, with TLS and a bearer token when the runtime's config asks for them. Health and
 * reflection need no token (load balancers and grpcurl probe them).
 */
export async function startGatewayServer(options: StartGatewayServerOptions): Promise<GatewayServerHandle> {
  const { runtime, host = "127.0.0.1", port = 0, log = stderrLog, disposeRuntime = true, shutdownGraceMs = 5_000 } = options;
  const config = runtime.config;
  const credentials =
    config.tlsCert !== undefined && config.tlsKey !== undefined
      ? ServerCredentials.createSsl(null, [{ cert_chain: readPem(config.tlsCert, "tlsCert"), private_key: readPem(config.tlsKey, "tlsKey") }], false)
      : ServerCredentials.createInsecure();
  const server = new Server({ "grpc.max_receive_message_length": DEFAULT_INDEX_SERVICE_LIMITS.maxDocumentBytes + 1024 * 1024 });
  const admission = new Admission(config.maxConcurrentAsks, config.maxQueuedAsks);
  const ctx: ServerContext = { runtime, admission, log };
  server.addService(AttrRagServiceService, { ask: askHandler(ctx), attribute: attributeHandler(ctx) });
  // Embedded, the store is here and IndexService serves it too; distributed, the index service holds it.
  const services = runtime.local !== undefined ? [ATTR_RAG_SERVICE_NAME, INDEX_SERVICE_NAME] : [ATTR_RAG_SERVICE_NAME];
  if (runtime.local !== undefined) {
    server.addService(IndexServiceService, withBearer(createIndexServiceImplementation(runtime.local.store, runtime.local.embedder, {}, log), config.authToken));
  }
  const health = new HealthImplementation(Object.fromEntries(["", ...services].map((name) => [name, "SERVING" as const])));
  health.addToServer(server);
  addServerReflection(server, [...services, HEALTH_SERVICE_NAME]);

  const bound = await listen(server, host, port, credentials, "gateway");

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      for (const name of ["", ...services]) health.setStatus(name, "NOT_SERVING");
      await shutdown(server, shutdownGraceMs);
      if (disposeRuntime) await runtime.dispose();
    })();
    return closing;
  };
  return { address: bound.address, port: bound.port, tls: config.tlsCert !== undefined, admission, health, close, [Symbol.asyncDispose]: close };
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new Error(`gateway: cannot read ${what} ${path}: ${(err as Error).message}`, { cause: err });
  }
}
