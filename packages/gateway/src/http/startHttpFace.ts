import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import type { ServiceLog } from "@attr-rag/index";
import { serviceDescOf } from "./apiRegistry.js";
import { bridgeService } from "./bridgeService.js";
import { applyCors } from "./cors.js";
import type { ServiceTable } from "./serviceTable.js";
import { serveStatic } from "./staticFiles.js";

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
  readonly log: ServiceLog;
}

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
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    try {
      if (applyCors(options.corsOrigins ?? [], req, res)) return;
      adapter(req, res);
    } catch (err) {
      internalError(res, err, log);
    }
  };
  const server: Server = options.tls !== undefined ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, listener) : createHttpServer(listener);
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
