import { isIP } from "node:net";
import { bearerRefusal } from "../server/auth.js";

/** What the HTTP face checks on a request's line and headers, before a byte of its body is read. */
export interface RequestGuardOptions {
  /** With a token, every RPC route needs `authorization: Bearer TOKEN`. */
  readonly token?: string;
  /** Host names (besides loopback ones) this gateway answers to when it has no token. */
  readonly allowedHosts: readonly string[];
  /** The largest body of CreateBatch and IngestDocuments, the RPCs that carry many items. */
  readonly maxBodyBytes: number;
  /** The largest body of every other RPC. */
  readonly smallBodyBytes: number;
}

/** A refusal: the HTTP status and the Connect error body to answer with. */
export interface Refusal {
  readonly httpStatus: number;
  readonly code: string;
  readonly message: string;
}

/** RPC routes whose one message may hold a whole batch or documents. */
const LARGE_BODY_ROUTES = new Set(["/attr_rag.v1.BatchService/CreateBatch", "/attr_rag.v1.IndexService/IngestDocuments"]);
/** Our services' routes; health (grpc.health.v1, probed by load balancers) and the console's files need no token. */
const RPC_ROUTE_PREFIX = "/attr_rag.v1.";
/** Plain HTTP routes of our own (batch results downloads): the token too. */
const HTTP_ROUTE_PREFIX = "/v1/";

/**
 * Decides on the request line and headers alone whether a request may go on. A body is read only after this
 * passes, so an unauthenticated or oversized upload costs the gateway no memory: without the token a
 * 60 MiB POST is refused before its first byte is buffered.
 *
 * Without a token the gateway trusts whoever can reach it, so it also checks the Host header: a web page that
 * rebinds its own name to 127.0.0.1 reaches the port, but its requests still carry its own name, and they are
 * refused unless that name is a loopback one or allowed by configuration.
 */
export function guardRequest(method: string | undefined, url: string | undefined, headers: Record<string, string | string[] | undefined>, o: RequestGuardOptions): Refusal | undefined {
  const path = (url ?? "/").split("?")[0] ?? "/";
  if (o.token === undefined) {
    const host = hostName(headers.host);
    if (host === undefined || !(isLoopbackName(host) || o.allowedHosts.some((h) => h.toLowerCase() === host))) {
      return {
        httpStatus: 403,
        code: "permission_denied",
        message: `this gateway has no auth token and answers only to loopback host names, not ${JSON.stringify(String(headers.host ?? "(none)").slice(0, 100))}: set an auth token (authToken), or allow the name (serve --allowed-host)`,
      };
    }
  }
  // Every method on an RPC route (Connect also routes GET for side-effect-free methods) but a CORS preflight,
  // which browsers send without credentials.
  if (method === "OPTIONS" || !(path.startsWith(RPC_ROUTE_PREFIX) || path.startsWith(HTTP_ROUTE_PREFIX))) return undefined;
  if (o.token !== undefined) {
    const refusal = bearerRefusal(headers.authorization, o.token, "the header");
    if (refusal !== undefined) return { httpStatus: 401, code: "unauthenticated", message: refusal };
  }
  const limit = LARGE_BODY_ROUTES.has(path) ? o.maxBodyBytes : Math.min(o.smallBodyBytes, o.maxBodyBytes);
  const length = Number(headers["content-length"]);
  if (Number.isFinite(length) && length > limit) {
    return { httpStatus: 429, code: "resource_exhausted", message: `request body of ${length} bytes is over this route's limit of ${limit} bytes${LARGE_BODY_ROUTES.has(path) ? " (gateway config maxMessageBytes)" : " (only CreateBatch and IngestDocuments take large bodies)"}` };
  }
  return undefined;
}

/** "Example.COM:8080" → "example.com"; "[::1]:80" → "::1"; undefined when absent or malformed. */
function hostName(header: string | string[] | undefined): string | undefined {
  if (typeof header !== "string" || header === "") return undefined;
  const h = header.trim().toLowerCase();
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    return end > 0 ? h.slice(1, end) : undefined;
  }
  const colon = h.lastIndexOf(":");
  return colon >= 0 ? h.slice(0, colon) : h;
}

/** localhost, *.localhost, 127.0.0.0/8 and ::1. */
export function isLoopbackName(host: string): boolean {
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) return host === "::1" || host === "0:0:0:0:0:0:0:1";
  return false;
}
