// Downloads a GGUF into the model cache so that a cache name works wherever a model path does. Bytes go to
// NAME.gguf.partial (NAME.gguf.partial.json records the source and its validator, so an interrupted transfer
// resumes; see httpDownload.ts), and a file under its final name is always whole: it is synced and renamed
// into place only after its size, its GGUF magic and (when known) its sha256 check out.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { EngineArgumentError, ModelPullError } from "../errors.js";
import { download, hashPrefix, type DownloadProgress } from "./httpDownload.js";
import { modelCacheDir, type Env } from "./modelLocator.js";
import { parseModelSource } from "./modelSource.js";
import { removeFiles } from "./partialMeta.js";
import { lockPull } from "./pullLock.js";

export type PullProgress = DownloadProgress;

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
  const partial = `${path}.partial`;
  const release = lockPull(partial, source.fileName);
  try {
    if (existsSync(path) && o.force !== true) {
      const sha256 = (await hashPrefix(path, statSync(path).size, o.signal)).digest("hex");
      if (expected !== undefined && sha256 !== expected) {
        throw new ModelPullError(`${path} already exists with sha256 ${sha256}, not ${expected}; pass --force to download it again`, false);
      }
      o.onNote?.(`${source.fileName} is already in ${dir}`);
      return { ...base, bytes: statSync(path).size, sha256, resumedFrom: 0, alreadyPresent: true, verifiedBy: expected !== undefined ? "--sha256" : "none" };
    }

    const got = await download(source, partial, { checksumGiven: expected !== undefined, signal: o.signal, onProgress: o.onProgress, onNote: o.onNote });
    const discard = () => removeFiles(partial, `${partial}.json`);
    const bytes = statSync(partial).size;
    checkGgufMagic(partial, bytes, source.url, discard);
    const sha256 = got.hash.digest("hex");
    const reference = expected ?? got.hubSha256;
    if (reference !== undefined && sha256 !== reference) {
      discard();
      const from = expected !== undefined ? "--sha256" : "the hub's X-Linked-ETag";
      throw new ModelPullError(`sha256 mismatch for ${source.fileName}: expected ${reference} (${from}), got ${sha256}; the download was deleted`, false);
    }
    syncFile(partial);
    renameSync(partial, path);
    removeFiles(`${partial}.json`);
    return { ...base, bytes, sha256, resumedFrom: got.resumedFrom, alreadyPresent: false, verifiedBy: expected !== undefined ? "--sha256" : reference !== undefined ? "hub" : "none" };
  } finally {
    release();
  }
}

function checkGgufMagic(path: string, bytes: number, url: string, discard: () => void): void {
  const magic = Buffer.alloc(4);
  const fd = openSync(path, "r");
  try {
    readSync(fd, magic, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  if (magic.toString("latin1") !== "GGUF") {
    discard();
    throw new ModelPullError(
      `${url} sent ${bytes} bytes that are not a GGUF file (they start with ${JSON.stringify(magic.toString("latin1"))}); is it a direct download link? Nothing was kept`,
      false,
    );
  }
}

/** On disk before the rename, so a crash right after it cannot leave a short file under the final name. */
function syncFile(path: string): void {
  const fd = openSync(path, "r+");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
