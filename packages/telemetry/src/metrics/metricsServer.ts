import { createServer, type Server } from "node:http";
import { enableDefaultMetrics, metricsRegistry } from "./registry.js";

export interface MetricsServer {
  /** "ip:port" as bound (IPv6 in brackets). */
  readonly address: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves the process's registry at GET /metrics (Prometheus text format) on its own port, apart from the
 * token-guarded HTTP face: a scraper needs no credentials, and the figures carry no document text, question
 * or secret. Anything else answers 404. Also starts Node's default metrics.
 */
export async function startMetricsServer(options: { host?: string; port: number }): Promise<MetricsServer> {
  const host = options.host ?? "127.0.0.1";
  enableDefaultMetrics();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD" }).end();
      return;
    }
    if (path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found: metrics are at /metrics\n");
      return;
    }
    metricsRegistry.metrics().then(
      (text) => res.writeHead(200, { "content-type": metricsRegistry.contentType }).end(req.method === "HEAD" ? undefined : text),
      (err: unknown) => res.writeHead(500, { "content-type": "text/plain" }).end(`collecting metrics failed: ${(err as Error).message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(new Error(`metrics: cannot listen on ${host}:${options.port}: ${err.code === "EADDRINUSE" ? "the port is in use; pick another --metrics-port (0: a free one)" : err.message}`)),
    );
    server.listen(options.port, host, () => resolve());
  });
  // The role's own servers keep the process alive; the metrics port alone must not (a failed start exits).
  server.unref();
  // Named by the address the socket is bound to, not the one asked for: what a scraper must reach, and what a
  // test of the default bind can check.
  const bound = server.address();
  const port = typeof bound === "object" && bound !== null ? bound.port : options.port;
  const ip = typeof bound === "object" && bound !== null ? bound.address : host;
  const shown = ip.includes(":") ? `[${ip}]` : ip;
  return {
    address: `${shown}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
