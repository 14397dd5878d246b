import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { ServiceLog } from "@attr-rag/index";
import { serviceDescOf } from "./apiRegistry.js";
import { bridgeService } from "./bridgeService.js";
import { applyCors } from "./cors.js";
import { guardRequest, type Refusal } from "./requestGuard.js";
import type { ServiceTable } from "./serviceTable.js";
import { serveStatic } from "./staticFiles.js";
import { RESULTS_ROUTE, serveResults, type BatchStore } from "@attr-rag/batch";

export interface HttpFaceOptions {
  readonly table: ServiceTable;
  readonly host: string;
  /** 0: a free port. */
  readonly port: number;
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  /** Largest request body (Connect answers resource_exhausted beyond it). */
  readonly maxBodyBytes: number;
  /** Origins allowed cross-origin ("*" for any); none by default. */
  readonly corsOrigins?: readonly string[];
  /** The web console's built files, served at "/". */
  readonly consoleDir?: string;
  /** The gateway's bearer token: checked on the headers, before a request's body is read. */
  readonly authToken?: string;
  /** Without a token: host names, besides loopback ones, that requests may carry (a proxy's name). */
  readonly allowedHosts?: readonly string[];
  /** Batches whose results GET /v1/batches/{id}/results.jsonl serves (resumable, docs/batches.md). */
  readonly batches?: BatchStore;
  readonly log: ServiceLog;
}

/** The largest body of an RPC other than CreateBatch and IngestDocuments (an Ask or Attribute with its sets). */
export const SMALL_BODY_BYTES = 4 * 1024 * 1024;
/** Open connections at once; past it new ones are closed at once. */
const MAX_CONNECTIONS = 512;
/** How much of a refused request's body is read and discarded at most, and how long its connection lingers. */
const DRAIN_BYTES = 64 * 1024;
const LINGER_MS = 1_000;

export interface HttpFace {
  /** "host:port" as bound. */
  readonly address: string;
  readonly port: number;
  /** Stops accepting, lets running calls finish for up to `graceMs`, then cancels them and drops connections. */
  close(graceMs: number): Promise<void>;
}

/**
 * The gateway's HTTP face: every service of `table` under the Connect protocol (JSON or binary, unary and
 * server streaming, also gRPC-web), served by the same implementations as the gRPC port; the web console's
 * files; CORS closed unless configured. Unknown routes get a 404 with a JSON body.
 */
export async function startHttpFace(options: HttpFaceOptions): Promise<HttpFace> {
  const { table, log } = options;
  const shutdown = new AbortController();
  const routes = (router: ConnectRouter) => {
    for (const { definition, implementation } of table.services) {
      const first = Object.values(definition)[0];
      const desc = first === undefined ? undefined : serviceDescOf(first.path);
      if (desc === undefined) continue;
      router.service(desc, bridgeService(desc, definition, implementation) as never);
    }
  };
  const fallback = async (req: IncomingMessage, res: ServerResponse) => {
    if (options.consoleDir !== undefined && (await serveStatic(options.consoleDir, req, res))) return;
    notFound(req, res);
  };
  const adapter = connectNodeAdapter({
    routes,
    readMaxBytes: options.maxBodyBytes,
    // A misspelt field is an error that names it, not a setting silently left at its default.
    jsonOptions: { ignoreUnknownFields: false },
    shutdownSignal: shutdown.signal,
    fallback: (req, res) => void fallback(req as IncomingMessage, res as unknown as ServerResponse).catch((err: unknown) => internalError(res as unknown as ServerResponse, err, log)),
  });
  const guard = { token: options.authToken, allowedHosts: options.allowedHosts ?? [], maxBodyBytes: options.maxBodyBytes, smallBodyBytes: SMALL_BODY_BYTES };
  /** A request that passed the guard. */
  const serve = (req: IncomingMessage, res: ServerResponse) => {
    try {
      if (applyCors(options.corsOrigins ?? [], req, res)) return;
      const download = options.batches !== undefined ? RESULTS_ROUTE.exec((req.url ?? "/").split("?")[0] ?? "/") : null;
      if (download !== null) {
        // Stops reading the store when the client goes away (a dropped download) or the gateway shuts down.
        const gone = new AbortController();
        res.once("close", () => gone.abort());
        const signal = AbortSignal.any([gone.signal, shutdown.signal]);
        let batchId: string;
        try {
          batchId = decodeURIComponent(download[1]!);
        } catch {
          return void res.writeHead(400, { "content-type": "application/json" }).end(JSON.stringify({ code: "invalid_argument", message: "the batch id in the path is not valid percent-encoding" }));
        }
        void serveResults(req, res, options.batches!, batchId, signal).catch((err: unknown) => {
          if (!signal.aborted) internalError(res, err, log);
          else res.destroy();
        });
        return;
      }
      adapter(req, res);
    } catch (err) {
      internalError(res, err, log);
    }
  };
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const refusal = guardRequest(req.method, req.url, req.headers, guard);
    if (refusal !== undefined) refuse(req, res, refusal);
    else serve(req, res);
  };
  const server: Server = options.tls !== undefined ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, listener) : createHttpServer(listener);
  // Slow or idle clients do not hold connections: headers within 15 s, a whole request within 5 min (a large
  // CreateBatch over a slow link), idle keep-alive connections closed after 5 s.
  server.headersTimeout = 15_000;
  server.requestTimeout = 300_000;
  server.keepAliveTimeout = 5_000;
  server.maxConnections = MAX_CONNECTIONS;
  // A client that asks before sending its body (`Expect: 100-continue`, as curl does for large uploads) is
  // refused before it sends a byte of it.
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    const refusal = guardRequest(req.method, req.url, req.headers, guard);
    if (refusal !== undefined) return refuse(req, res, refusal);
    res.writeContinue();
    serve(req, res);
  });
  server.on("clientError", (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"code":"invalid_argument","message":"malformed HTTP request"}');
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(new Error(`gateway: cannot listen for HTTP on ${options.host}:${options.port}: ${err.code === "EADDRINUSE" ? "the port is in use (pick another with --http-port)" : err.message}`)),
    );
    server.listen(options.port, options.host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  const address = bound.family === "IPv6" ? `[${bound.address}]:${bound.port}` : `${bound.address}:${bound.port}`;

  let closing: Promise<void> | undefined;
  const close = (graceMs: number) => {
    closing ??= new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        shutdown.abort();
        server.closeAllConnections();
      }, graceMs);
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      server.closeIdleConnections();
    });
    return closing;
  };
  return { address, port: bound.port, close };
}

/**
 * Answers a refused request without reading its body. A client that did not wait for `100 Continue` is sending
 * it already, and reading it all (as Node's server does after an answer) made 20 refused 60 MiB uploads grow the
 * gateway by tens of MiB. So the answer says `Connection: close`, at most DRAIN_BYTES more are read, then the
 * socket stops reading and its sender waits on TCP flow control.
 *
 * The close is staged (RFC 9112 9.6): the write side is shut once the answer is sent, and the socket is cut
 * only after LINGER_MS (or when the client closes first). Cutting at once, with the client's bytes unread,
 * makes the kernel reset the connection, and a reset can drop the answer before the client reads it (curl then
 * reports a broken pipe instead of the 401).
 */
function refuse(req: IncomingMessage, res: ServerResponse, r: Refusal): void {
  const body = JSON.stringify({ code: r.code, message: r.message });
  if (req.complete) return void res.writeHead(r.httpStatus, { "content-type": "application/json" }).end(body);
  const socket = req.socket;
  // Node's server ends a `Connection: close` answer with destroySoon(), which destroys the socket as soon as
  // the answer is written; for this socket it only shuts the write side, and the timer below cuts it.
  socket.destroySoon = () => void socket.end();
  let drained = 0;
  req.on("data", (chunk: Buffer) => {
    drained += chunk.length;
    if (drained >= DRAIN_BYTES) {
      req.pause();
      socket.pause();
    }
  });
  const cut = setTimeout(() => socket.destroy(), LINGER_MS);
  socket.once("close", () => clearTimeout(cut));
  res.writeHead(r.httpStatus, { "content-type": "application/json", connection: "close" }).end(body);
}

function notFound(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? "/").split("?")[0]?.slice(0, 200);
  const body = JSON.stringify({ code: "not_found", message: `no such route: ${req.method} ${path} (RPCs are POST /attr_rag.v1.<Service>/<Method>)` });
  res.writeHead(404, { "content-type": "application/json" }).end(body);
}

function internalError(res: ServerResponse, err: unknown, log: ServiceLog): void {
  log(`http: unexpected error: ${(err as Error)?.stack ?? String(err)}`);
  if (res.headersSent) res.destroy();
  else res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ code: "internal", message: "internal error (the gateway's log has the details)" }));
}
