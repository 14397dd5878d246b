import type { IncomingMessage, ServerResponse } from "node:http";

const ALLOWED_HEADERS = ["authorization", "content-type", "connect-protocol-version", "connect-timeout-ms", "x-grpc-web", "x-user-agent", "grpc-timeout"];
const EXPOSED_HEADERS = ["grpc-status", "grpc-message", "grpc-status-details-bin"];

/**
 * Cross-origin access: closed unless origins are configured (the console is same-origin and needs none).
 * Returns true when it answered the request itself (a preflight).
 */
export function applyCors(origins: readonly string[], req: IncomingMessage, res: ServerResponse): boolean {
  const origin = req.headers.origin;
  const allowed = origin !== undefined && (origins.includes("*") || origins.includes(origin));
  if (allowed) {
    res.setHeader("access-control-allow-origin", origins.includes("*") ? "*" : origin);
    res.setHeader("vary", "origin");
    res.setHeader("access-control-expose-headers", EXPOSED_HEADERS.join(", "));
  }
  if (req.method !== "OPTIONS") return false;
  if (!allowed) {
    res.writeHead(403, { "content-type": "application/json" }).end(JSON.stringify({ code: "permission_denied", message: "cross-origin requests are not allowed from this origin (gateway config httpCorsOrigins)" }));
    return true;
  }
  res.writeHead(204, {
    "access-control-allow-methods": "POST, GET, OPTIONS",
    "access-control-allow-headers": ALLOWED_HEADERS.join(", "),
    "access-control-max-age": "7200",
  });
  res.end();
  return true;
}
