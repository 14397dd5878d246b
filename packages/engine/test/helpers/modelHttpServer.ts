// A real HTTP server on 127.0.0.1 that serves model files the way download hosts do (Content-Length, ETag,
// byte ranges, redirects like the Hugging Face hub's), and can misbehave on purpose: cut a transfer short,
// ignore Range headers. It records every request so tests can see what the client asked for.
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ServedRequest {
  readonly path: string;
  readonly range: string | undefined;
  readonly ifRange: string | undefined;
  readonly authorization: string | undefined;
  status: number;
  bytesSent: number;
}

export interface ModelServerOptions {
  /** Answer Range requests with 206 (default true); false answers every GET with the whole file. */
  ranges?: boolean;
  /** For the n-th GET of a file, drop the connection after this many body bytes (undefined: send all). */
  cutAfter?: (number | undefined)[];
  /** Sent as X-Linked-ETag on the hub's redirect (never on the CDN's answer), as huggingface.co does. */
  linkedSha256?: string;
  /** Where hub redirects go (another origin, like the hub's CDN); default this server. */
  cdnOrigin?: string;
  /** Answer Range requests even when If-Range no longer matches (as some object stores do). */
  ignoreIfRange?: boolean;
  /** Send neither ETag nor Last-Modified. */
  noValidators?: boolean;
}

export interface ModelServer extends AsyncDisposable {
  readonly origin: string;
  readonly requests: ServedRequest[];
  url(path: string): string;
  /** The ETag this server sends for a body. */
  etagOf(body: Buffer): string;
}

/**
 * `files` maps paths ("/models/a.gguf") to bodies; a test may replace a body between requests (the ETag is
 * the content's hash, so it changes with it). `/hub/OWNER/REPO/resolve/main/FILE` redirects (302) to
 * `/cdn/FILE`, which serves `files["/cdn/FILE"]`, as huggingface.co sends resolve URLs to its CDN.
 */
export async function startModelServer(files: Record<string, Buffer>, options: ModelServerOptions = {}): Promise<ModelServer> {
  const requests: ServedRequest[] = [];
  const gets = new Map<string, number>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname);
    const record: ServedRequest = {
      path,
      range: req.headers.range,
      ifRange: req.headers["if-range"] as string | undefined,
      authorization: req.headers.authorization,
      status: 0,
      bytesSent: 0,
    };
    requests.push(record);
    const hub = /^\/hub\/[^/]+\/[^/]+\/resolve\/main\/(.+)$/.exec(path);
    if (hub !== null) {
      record.status = 302;
      const linked = options.linkedSha256 !== undefined ? { "x-linked-etag": `"${options.linkedSha256}"` } : {};
      res.writeHead(302, { location: `${options.cdnOrigin ?? ""}/cdn/${hub[1]}`, ...linked }).end();
      return;
    }
    const body = files[path];
    if (body === undefined) {
      record.status = 404;
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    const n = gets.get(path) ?? 0;
    gets.set(path, n + 1);
    const etag = etagOf(body);
    const headers: Record<string, string | number> = { "content-type": "application/octet-stream" };
    if (options.noValidators !== true) headers.etag = etag;
    if (options.ranges !== false) headers["accept-ranges"] = "bytes";

    let start = 0;
    const m = options.ranges === false ? null : /^bytes=(\d+)-$/.exec(req.headers.range ?? "");
    const validatorOk = options.ignoreIfRange === true || req.headers["if-range"] === undefined || req.headers["if-range"] === etag;
    if (m !== null && validatorOk) {
      start = Number(m[1]);
      if (start >= body.length) {
        record.status = 416;
        res.writeHead(416, { ...headers, "content-range": `bytes */${body.length}` }).end();
        return;
      }
      record.status = 206;
      res.writeHead(206, { ...headers, "content-length": body.length - start, "content-range": `bytes ${start}-${body.length - 1}/${body.length}` });
    } else {
      record.status = 200;
      res.writeHead(200, { ...headers, "content-length": body.length });
    }
    const rest = body.subarray(start);
    const cut = options.cutAfter?.[n];
    if (cut !== undefined && cut < rest.length) {
      record.bytesSent = cut;
      // Send what was promised so far, then close the connection mid-body. The client may still lose the tail
      // of it (fetch drops a body's unread chunks when the connection fails), so tests read how much arrived
      // from the .partial file instead of assuming all `cut` bytes did.
      res.write(rest.subarray(0, cut), () => setTimeout(() => res.socket?.end(), 20));
      return;
    }
    record.bytesSent = rest.length;
    res.end(rest);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { origin, requests, url: (path) => `${origin}${path}`, etagOf, [Symbol.asyncDispose]: close };
}

function etagOf(body: Buffer): string {
  return `"${createHash("sha1").update(body).digest("hex").slice(0, 16)}"`;
}

/** A GGUF-looking file: the magic, then seeded pseudo-random bytes (what is checked is size and sha256). */
export function fakeGguf(bytes: number, seed = 1): Buffer {
  const out = Buffer.alloc(bytes);
  out.write("GGUF", 0, "latin1");
  let x = seed >>> 0 || 1;
  for (let i = 4; i < bytes; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}
