import { readFileSync } from "node:fs";
import { Server, ServerCredentials } from "@grpc/grpc-js";
import { ATTR_RAG_SERVICE_NAME, AttrRagServiceService, INDEX_SERVICE_NAME, IndexServiceService } from "@attr-rag/contracts";
import { createIndexServiceImplementation, DEFAULT_INDEX_SERVICE_LIMITS, type ServiceLog } from "@attr-rag/index";
import { HealthImplementation } from "grpc-health-check";
import type { Runtime } from "../runtime/Runtime.js";
import { Admission } from "./admission.js";
import { askHandler } from "./askHandler.js";
import { attributeHandler } from "./attributeHandler.js";
import { reflectionService } from "./reflection.js";
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
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new RangeError(`port must be an integer from 0 to 65535, got ${String(port)}`);
  const credentials =
    config.tlsCert !== undefined && config.tlsKey !== undefined
      ? ServerCredentials.createSsl(null, [{ cert_chain: readFileSync(config.tlsCert), private_key: readFileSync(config.tlsKey) }], false)
      : ServerCredentials.createInsecure();
  const server = new Server({ "grpc.max_receive_message_length": DEFAULT_INDEX_SERVICE_LIMITS.maxDocumentBytes + 1024 * 1024 });
  const admission = new Admission(config.maxConcurrentAsks, config.maxQueuedAsks);
  const ctx: ServerContext = { runtime, admission, log };
  server.addService(AttrRagServiceService, { ask: askHandler(ctx), attribute: attributeHandler(ctx) });
  server.addService(IndexServiceService, withBearer(createIndexServiceImplementation(runtime.store, runtime.embedder, {}, log), config.authToken));
  const health = new HealthImplementation({ "": "SERVING", [ATTR_RAG_SERVICE_NAME]: "SERVING", [INDEX_SERVICE_NAME]: "SERVING" });
  health.addToServer(server);
  reflectionService().addToServer(server);

  const hostPart = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  let bound: number;
  try {
    bound = await new Promise<number>((resolve, reject) => {
      server.bindAsync(`${hostPart}:${port}`, credentials, (err, p) => (err ? reject(err) : resolve(p)));
    });
  } catch (err) {
    server.forceShutdown();
    throw new Error(`gateway: cannot listen on ${hostPart}:${port}: ${(err as Error).message}`, { cause: err });
  }

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      for (const name of ["", ATTR_RAG_SERVICE_NAME, INDEX_SERVICE_NAME]) health.setStatus(name, "NOT_SERVING");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, shutdownGraceMs);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (disposeRuntime) await runtime.dispose();
    })();
    return closing;
  };
  return { address: `${hostPart}:${bound}`, port: bound, tls: config.tlsCert !== undefined, admission, health, close, [Symbol.asyncDispose]: close };
}
