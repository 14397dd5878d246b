// Downloads a GGUF into the model cache so that a cache name works wherever a model path does. Bytes go to
// NAME.gguf.partial (with NAME.gguf.partial.json recording the source and its validator), so an interrupted
// transfer resumes with an HTTP Range request, and a file under its final name is always whole: it is renamed
// into place only after its size, its GGUF magic and (when known) its sha256 check out.
import { createHash, type Hash } from "node:crypto";
import { once } from "node:events";
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { EngineArgumentError, ModelPullError } from "../errors.js";
import { modelCacheDir, type Env } from "./modelLocator.js";
import { parseModelSource, type ModelSource } from "./modelSource.js";

export interface PullProgress {
  /** Bytes of the file on disk so far (including a resumed partial). */
  readonly received: number;
  /** The file's size, when the server said. */
  readonly total: number | undefined;
}

export interface PullOptions {
  /** An http(s) URL or hf:OWNER/REPO/FILE.gguf. */
  readonly source: string;
  /** Expected sha256 (hex); without it, a Hugging Face file is checked against the hub's own sha256. */
  readonly sha256?: string;
  /** Target directory; default the model cache (modelCacheDir). */
  readonly dir?: string;
  /** File name in the directory; default the URL's. */
  readonly name?: string;
  /** Download again even if the file is already there. */
  readonly force?: boolean;
  readonly env?: Env;
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: PullProgress) => void;
  /** One-line notes: resuming, starting over, already present. */
  readonly onNote?: (line: string) => void;
}

export interface PullResult {
  readonly path: string;
  readonly name: string;
  readonly url: string;
  readonly bytes: number;
  readonly sha256: string;
  /** Bytes taken from an earlier, interrupted pull. */
  readonly resumedFrom: number;
  readonly alreadyPresent: boolean;
  /** What the sha256 was checked against. */
  readonly verifiedBy: "--sha256" | "hub" | "none";
}

interface PartialMeta {
  url: string;
  /** A strong ETag or Last-Modified, sent as If-Range so a changed file is never stitched to an old prefix. */
  validator?: string;
  total?: number;
  hubSha256?: string;
}

const SHA256 = /^[0-9a-f]{64}$/;

export async function pullModel(o: PullOptions): Promise<PullResult> {
  const env = o.env ?? process.env;
  const source = parseModelSource(o.source, { ...(o.name !== undefined ? { name: o.name } : {}), env });
  const expected = o.sha256?.trim().toLowerCase();
  if (expected !== undefined && !SHA256.test(expected)) throw new EngineArgumentError(`--sha256 must be 64 hex digits, got "${o.sha256}"`);
  const dir = o.dir ?? modelCacheDir(env);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new ModelPullError(`cannot create the model directory ${dir}: ${(err as Error).message}; set ATTR_RAG_MODELS or pass --dir`, false, { cause: err });
  }
  const path = join(dir, source.fileName);
  const base = { path, name: source.fileName, url: source.url };

  if (existsSync(path) && o.force !== true) {
    const sha256 = await hashFile(path);
    if (expected !== undefined && sha256 !== expected) {
      throw new ModelPullError(`${path} already exists with sha256 ${sha256}, not ${expected}; pass --force to download it again`, false);
    }
    o.onNote?.(`${source.fileName} is already in ${dir}`);
    return { ...base, bytes: statSync(path).size, sha256, resumedFrom: 0, alreadyPresent: true, verifiedBy: expected !== undefined ? "--sha256" : "none" };
  }

  const partial = `${path}.partial`;
  const metaPath = `${partial}.json`;
  let meta = readMeta(metaPath);
  if (meta?.url !== source.url) {
    // A partial file from another source (or without its record) cannot be resumed safely.
    removeFiles(partial, metaPath);
    meta = undefined;
  }
  const { hash, resumedFrom } = await download(source, partial, metaPath, meta, o);

  const bytes = statSync(partial).size;
  await checkGgufMagic(partial, bytes, source, () => removeFiles(partial, metaPath));
  const sha256 = hash.digest("hex");
  const finalMeta = readMeta(metaPath);
  const reference = expected ?? finalMeta?.hubSha256;
  if (reference !== undefined && sha256 !== reference) {
    removeFiles(partial, metaPath);
    const from = expected !== undefined ? "--sha256" : "the hub's X-Linked-ETag";
    throw new ModelPullError(`sha256 mismatch for ${source.fileName}: expected ${reference} (${from}), got ${sha256}; the download was deleted`, false);
  }
  renameSync(partial, path);
  removeFiles(metaPath);
  return { ...base, bytes, sha256, resumedFrom, alreadyPresent: false, verifiedBy: expected !== undefined ? "--sha256" : reference !== undefined ? "hub" : "none" };
}

/** Fetches the file into `partial`, resuming it when the server allows; returns the running sha256. */
async function download(source: ModelSource, partial: string, metaPath: string, meta: PartialMeta | undefined, o: PullOptions) {
  const host = new URL(source.url).host;
  // One restart at most: a server that neither resumes nor serves the whole file again is an error.
  for (let attempt = 0; attempt < 3; attempt++) {
    const start = existsSync(partial) ? statSync(partial).size : 0;
    const headers: Record<string, string> = { ...source.headers, "user-agent": "attr-rag (models pull)" };
    if (start > 0) {
      headers.range = `bytes=${start}-`;
      if (meta?.validator !== undefined) headers["if-range"] = meta.validator;
    }
    let res: Response;
    try {
      res = await fetch(source.url, { headers, redirect: "follow", ...(o.signal !== undefined ? { signal: o.signal } : {}) });
    } catch (err) {
      throw networkError(err, host, start, o.signal);
    }

    if (res.status === 416 && start > 0) {
      await res.body?.cancel();
      const total = unsatisfiedTotal(res.headers.get("content-range"));
      if (total === start) return { hash: await hashPrefix(partial, start), resumedFrom: start }; // already whole
      o.onNote?.(`${host} refused to resume at byte ${start}; downloading from the start`);
      removeFiles(partial);
      continue;
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw httpError(res, source, () => removeFiles(partial, metaPath));
    }

    let offset = 0;
    let total = contentLength(res.headers);
    if (res.status === 206) {
      const range = contentRange(res.headers.get("content-range"));
      if (range === undefined || range.start !== start) {
        await res.body?.cancel();
        o.onNote?.(`${host} answered another byte range than asked; downloading from the start`);
        removeFiles(partial);
        continue;
      }
      offset = start;
      total = range.total;
    } else if (start > 0) {
      o.onNote?.(`${host} does not resume downloads (no HTTP Range support, or the file changed); downloading from the start`);
    }
    if (offset > 0) o.onNote?.(`resuming ${source.fileName} at ${offset} bytes`);

    const hubSha256 = source.fromHub ? linkedSha256(res.headers) : undefined;
    meta = {
      url: source.url,
      ...(strongValidator(res.headers) !== undefined ? { validator: strongValidator(res.headers)! } : {}),
      ...(total !== undefined ? { total } : {}),
      ...(hubSha256 !== undefined ? { hubSha256 } : {}),
    };
    writeFileSync(metaPath, JSON.stringify(meta));
    const hash = offset > 0 ? await hashPrefix(partial, offset) : createHash("sha256");
    await receive(res, partial, offset, total, hash, host, o);
    return { hash, resumedFrom: offset };
  }
  throw new ModelPullError(`${host} kept answering with unusable byte ranges; try again later`, true);
}

/** Streams the body into `partial` at `offset`, hashing as it goes; an interruption keeps what arrived. */
async function receive(res: Response, partial: string, offset: number, total: number | undefined, hash: Hash, host: string, o: PullOptions) {
  const file = createWriteStream(partial, { flags: offset > 0 ? "a" : "w" });
  const closed = once(file, "close");
  let received = offset;
  let failure: unknown;
  try {
    if (res.body === null) throw new Error("the response had no body");
    for await (const chunk of res.body) {
      const bytes = chunk as Uint8Array;
      hash.update(bytes);
      received += bytes.length;
      if (!file.write(bytes)) await Promise.race([once(file, "drain"), closed]);
      o.onProgress?.({ received, total });
    }
  } catch (err) {
    failure = err;
  } finally {
    file.end();
    await closed.catch(() => {});
  }
  if (failure !== undefined || (total !== undefined && received !== total)) {
    const of = total !== undefined ? ` of ${total}` : "";
    const why = o.signal?.aborted ? "interrupted" : `interrupted (${describe(failure ?? new Error("the server closed the connection early"))})`;
    throw new ModelPullError(`the transfer from ${host} was ${why} after ${received}${of} bytes; run the same command again to resume`, true, { cause: failure });
  }
}

async function checkGgufMagic(path: string, bytes: number, source: ModelSource, discard: () => void) {
  const handle = await open(path, "r");
  const magic = Buffer.alloc(4);
  try {
    await handle.read(magic, 0, 4, 0);
  } finally {
    await handle.close();
  }
  if (magic.toString("latin1") !== "GGUF") {
    discard();
    throw new ModelPullError(
      `${source.url} sent ${bytes} bytes that are not a GGUF file (they start with ${JSON.stringify(magic.toString("latin1"))}); is it a direct download link? Nothing was kept`,
      false,
    );
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

async function hashPrefix(path: string, length: number): Promise<Hash> {
  const hash = createHash("sha256");
  if (length > 0) for await (const chunk of createReadStream(path, { start: 0, end: length - 1 })) hash.update(chunk as Buffer);
  return hash;
}

async function hashFile(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest("hex");
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

function strongValidator(headers: Headers): string | undefined {
  const etag = headers.get("etag");
  if (etag !== null && !etag.startsWith("W/")) return etag;
  return headers.get("last-modified") ?? undefined;
}

/** Hugging Face sends an LFS file's sha256 as X-Linked-ETag. */
function linkedSha256(headers: Headers): string | undefined {
  const v = headers.get("x-linked-etag")?.replace(/"/g, "").toLowerCase();
  return v !== undefined && SHA256.test(v) ? v : undefined;
}

function readMeta(path: string): PartialMeta | undefined {
  try {
    const meta = JSON.parse(readFileSync(path, "utf8")) as PartialMeta;
    return typeof meta.url === "string" ? meta : undefined;
  } catch {
    return undefined;
  }
}

function removeFiles(...paths: string[]): void {
  for (const p of paths) rmSync(p, { force: true });
}
