// The HTTP half of `models pull`: fetch a file into NAME.partial, resuming it with a Range request only when
// the server can prove the file is the same one (a validator that still matches, or a checksum to check at the
// end), and never trusting bytes that did not reach the disk.
import { createHash, type Hash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync, statSync, writeFileSync } from "node:fs";
import { ModelPullError } from "../errors.js";
import type { ModelSource } from "./modelSource.js";
import { readPartialMeta, removeFiles } from "./partialMeta.js";

export interface DownloadProgress {
  /** Bytes of the file on disk so far (including a resumed partial). */
  readonly received: number;
  /** The file's size, when the server said. */
  readonly total: number | undefined;
}

export interface DownloadOptions {
  /** A checksum will be checked at the end (--sha256): resuming is then safe even without a validator. */
  readonly checksumGiven: boolean;
  readonly signal?: AbortSignal | undefined;
  readonly onProgress?: ((p: DownloadProgress) => void) | undefined;
  readonly onNote?: ((line: string) => void) | undefined;
}

export interface Downloaded {
  /** sha256 of every byte of the file, as read back from the disk for a resumed prefix. */
  readonly hash: Hash;
  readonly resumedFrom: number;
  /** The hub's sha256 of the file (X-Linked-ETag), when the source is the Hugging Face hub. */
  readonly hubSha256: string | undefined;
}

const SHA256 = /^[0-9a-f]{64}$/;
const MAX_REDIRECTS = 10;

export async function download(source: ModelSource, partial: string, o: DownloadOptions): Promise<Downloaded> {
  const metaPath = `${partial}.json`;
  let meta = readPartialMeta(metaPath);
  if (meta?.url !== source.url) {
    // A partial file from another source (or without its record) cannot be resumed safely.
    removeFiles(partial, metaPath);
    meta = undefined;
  }
  const host = new URL(source.url).host;
  const restart = (why: string) => {
    o.onNote?.(`${why}; downloading from the start`);
    removeFiles(partial, metaPath);
    meta = undefined;
  };
  // A restart happens at most once per reason; a server that keeps answering unusably is an error.
  for (let attempt = 0; attempt < 3; attempt++) {
    let start = existsSync(partial) ? statSync(partial).size : 0;
    if (start > 0 && meta?.validator === undefined && meta?.hubSha256 === undefined && !o.checksumGiven) {
      restart(`cannot tell whether ${source.fileName} changed on ${host} since the partial download (no ETag or Last-Modified, and no checksum to check)`);
      start = 0;
    }
    const headers: Record<string, string> = { ...source.headers, "user-agent": "attr-rag (models pull)", "accept-encoding": "identity" };
    if (start > 0) {
      headers.range = `bytes=${start}-`;
      if (meta?.validator !== undefined) headers["if-range"] = meta.validator;
    }
    const { res, linkedSha256 } = await fetchFollowing(source.url, headers, source.fromHub, start, o.signal);

    if (res.status === 416 && start > 0) {
      await res.body?.cancel();
      if (unsatisfiedTotal(res.headers.get("content-range")) === start && meta?.total === start) {
        return { hash: await hashPrefix(partial, start, o.signal), resumedFrom: start, hubSha256: meta.hubSha256 }; // already whole
      }
      restart(`${host} refused to resume at byte ${start}`);
      continue;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw httpError(res, source, () => removeFiles(partial, metaPath));
    }

    const validator = strongValidator(res.headers);
    let offset = 0;
    let total = contentLength(res.headers);
    if (res.status === 206) {
      const range = contentRange(res.headers.get("content-range"));
      const changed =
        (meta?.validator !== undefined && validator !== undefined && validator !== meta.validator) ||
        (meta?.total !== undefined && range?.total !== undefined && range.total !== meta.total) ||
        (meta?.hubSha256 !== undefined && linkedSha256 !== undefined && linkedSha256 !== meta.hubSha256);
      if (range === undefined || range.start !== start || changed) {
        await res.body?.cancel();
        restart(changed ? `${source.fileName} changed on ${host} since the partial download` : `${host} answered another byte range than asked`);
        continue;
      }
      offset = start;
      total = range.total;
    } else if (start > 0) {
      o.onNote?.(`${host} does not resume downloads (no HTTP Range support, or the file changed); downloading from the start`);
    }
    if (offset > 0) o.onNote?.(`resuming ${source.fileName} at ${offset} bytes`);

    const hubSha256 = linkedSha256 ?? (offset > 0 ? meta?.hubSha256 : undefined);
    meta = {
      url: source.url,
      ...(validator !== undefined ? { validator } : {}),
      ...(total !== undefined ? { total } : {}),
      ...(hubSha256 !== undefined ? { hubSha256 } : {}),
    };
    writeFileSync(metaPath, JSON.stringify(meta));
    const hash = offset > 0 ? await hashPrefix(partial, offset, o.signal) : createHash("sha256");
    await receive(res, partial, offset, total, hash, host, o);
    return { hash, resumedFrom: offset, hubSha256 };
  }
  throw new ModelPullError(`${host} kept answering with unusable byte ranges; try again later`, true);
}

/**
 * fetch with redirects followed by hand: the hub sends the file's sha256 (X-Linked-ETag) on its redirect to
 * the CDN, not on the CDN's answer, and a token must not follow the request to another origin.
 */
async function fetchFollowing(url: string, headers: Record<string, string>, fromHub: boolean, start: number, signal: AbortSignal | undefined) {
  let current = new URL(url);
  const hopHeaders = { ...headers };
  let linkedSha256: string | undefined;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    let res: Response;
    try {
      res = await fetch(current, { headers: hopHeaders, redirect: "manual", ...(signal !== undefined ? { signal } : {}) });
    } catch (err) {
      throw networkError(err, current.host, start, signal);
    }
    if (fromHub) linkedSha256 ??= linkedSha256Of(res.headers);
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location !== null) {
      await res.body?.cancel();
      const next = new URL(location, current);
      if (next.origin !== current.origin) delete hopHeaders.authorization;
      current = next;
      continue;
    }
    return { res, linkedSha256 };
  }
  throw new ModelPullError(`more than ${MAX_REDIRECTS} redirects from ${url}`, false);
}

/** Streams the body into `partial` at `offset`, hashing as it goes; an interruption keeps what reached the disk. */
async function receive(res: Response, partial: string, offset: number, total: number | undefined, hash: Hash, host: string, o: DownloadOptions) {
  const file = createWriteStream(partial, { flags: offset > 0 ? "a" : "w" });
  let writeError: Error | undefined;
  file.on("error", (err) => (writeError ??= err));
  const closed = new Promise<void>((resolve) => file.on("close", resolve));
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        file.off("drain", done);
        file.off("close", done);
        resolve();
      };
      file.on("drain", done);
      file.on("close", done);
    });
  let received = offset;
  let readError: unknown;
  try {
    if (res.body === null) throw new Error("the response had no body");
    for await (const chunk of res.body) {
      if (writeError !== undefined) break;
      const bytes = chunk as Uint8Array;
      hash.update(bytes);
      received += bytes.length;
      if (!file.write(bytes)) await drained();
      o.onProgress?.({ received, total });
    }
  } catch (err) {
    readError = err;
  } finally {
    file.end();
    await closed;
  }
  if (writeError !== undefined) {
    throw new ModelPullError(`cannot write ${partial}: ${writeError.message}; fix that (free space?) and run the same command again to resume`, true, { cause: writeError });
  }
  const onDisk = statSync(partial).size;
  if (onDisk !== received) {
    throw new ModelPullError(`${partial} holds ${onDisk} bytes but ${received} arrived; run the same command again to resume`, true);
  }
  if (readError !== undefined || (total !== undefined && received !== total)) {
    const of = total !== undefined ? ` of ${total}` : "";
    const why = o.signal?.aborted ? "interrupted" : `interrupted (${describe(readError ?? new Error("the server closed the connection early"))})`;
    throw new ModelPullError(`the transfer from ${host} was ${why} after ${received}${of} bytes; run the same command again to resume`, true, { cause: readError });
  }
}

function httpError(res: Response, source: ModelSource, discard: () => void): ModelPullError {
  const what = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""} from ${source.url}`;
  if (res.status >= 500 || res.status === 429) return new ModelPullError(`${what}; the server failed, try again later (a partial download is kept and resumed)`, true);
  discard();
  if (res.status === 404) {
    return new ModelPullError(`${what}: no such file${source.fromHub ? "; check the owner, repository and file name on the hub" : "; check the URL"}`, false);
  }
  if (res.status === 401 || res.status === 403) {
    return new ModelPullError(`${what}: not allowed${source.fromHub ? "; for a gated or private repository accept its terms on the hub and set HF_TOKEN" : ""}`, false);
  }
  return new ModelPullError(what, false);
}

function networkError(err: unknown, host: string, start: number, signal: AbortSignal | undefined): ModelPullError {
  const kept = start > 0 ? `; the ${start} bytes already downloaded are kept, run the same command again to resume` : "";
  if (signal?.aborted) return new ModelPullError(`download interrupted${kept}`, true, { cause: err });
  const code = (err as { cause?: { code?: string } }).cause?.code;
  const why =
    code === "ENOTFOUND" || code === "EAI_AGAIN"
      ? `cannot resolve ${host} (offline, or no DNS?)`
      : code === "ECONNREFUSED"
        ? `${host} refused the connection`
        : `cannot reach ${host}: ${describe(err)}`;
  return new ModelPullError(`${why}${kept}`, true, { cause: err });
}

function describe(err: unknown): string {
  const e = err as { message?: string; cause?: { code?: string; message?: string } };
  return [e?.message, e?.cause?.code ?? e?.cause?.message].filter(Boolean).join(": ") || String(err);
}

/** sha256 of the first `length` bytes of a file, as they are on disk. */
export async function hashPrefix(path: string, length: number, signal?: AbortSignal): Promise<Hash> {
  const hash = createHash("sha256");
  if (length > 0) for await (const chunk of createReadStream(path, { start: 0, end: length - 1, ...(signal !== undefined ? { signal } : {}) })) hash.update(chunk as Buffer);
  return hash;
}

function contentLength(headers: Headers): number | undefined {
  const v = headers.get("content-length");
  return v !== null && /^\d+$/.test(v) ? Number(v) : undefined;
}

/** `bytes START-END/TOTAL` */
function contentRange(v: string | null): { start: number; total: number | undefined } | undefined {
  const m = v === null ? null : /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(v.trim());
  if (m === null) return undefined;
  return { start: Number(m[1]), total: m[3] === "*" ? undefined : Number(m[3]) };
}

/** `bytes *\/TOTAL` on a 416. */
function unsatisfiedTotal(v: string | null): number | undefined {
  const m = v === null ? null : /^bytes \*\/(\d+)$/.exec(v.trim());
  return m === null ? undefined : Number(m[1]);
}

/** A strong ETag, else Last-Modified: what If-Range may carry. */
function strongValidator(headers: Headers): string | undefined {
  const etag = headers.get("etag");
  if (etag !== null && !etag.startsWith("W/")) return etag;
  return headers.get("last-modified") ?? undefined;
}

/** Hugging Face sends an LFS file's sha256 as X-Linked-ETag. */
function linkedSha256Of(headers: Headers): string | undefined {
  const v = headers.get("x-linked-etag")?.replace(/"/g, "").toLowerCase();
  return v !== undefined && SHA256.test(v) ? v : undefined;
}
