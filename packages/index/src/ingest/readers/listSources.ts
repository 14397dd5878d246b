import { readdir, stat } from "node:fs/promises";
import { basename, extname, join, resolve } from "node:path";
import { DocumentReadError } from "../../errors.js";
import { fileError } from "./fileErrors.js";
import type { SkippedInput, SourceFile, SourceKind } from "./types.js";

export const DEFAULT_MAX_FILE_BYTES = 200 * 1024 * 1024;

const KINDS: Record<string, SourceKind> = { ".jsonl": "jsonl", ".txt": "text", ".md": "markdown", ".markdown": "markdown", ".pdf": "pdf" };

export const SUPPORTED_EXTENSIONS = Object.keys(KINDS);

/**
 * Expands paths (files and folders, recursively, in name order) into the files to read. Hidden entries
 * and unsupported extensions inside folders are reported through onSkip; a path that cannot be stat'ed
 * or listed goes to onError (or throws without it). Files are not opened here.
 */
export async function* listSources(
  paths: readonly string[],
  onSkip: (skip: SkippedInput) => void,
  onError: ((error: Error, file: string) => void) | undefined,
): AsyncGenerator<SourceFile> {
  for (const given of paths) {
    const path = resolve(given);
    let info;
    try {
      info = await stat(path);
    } catch (err) {
      const e = fileError(given, "read it", err);
      if (!onError) throw e;
      onError(e, given);
      continue;
    }
    if (info.isDirectory()) yield* walk(path, path, onSkip, onError);
    else yield* classify(path, resolve(path, ".."), info.size, onSkip, given);
  }
}

async function* walk(dir: string, root: string, onSkip: (s: SkippedInput) => void, onError: ((e: Error, f: string) => void) | undefined): AsyncGenerator<SourceFile> {
  let entries;
  try {
    entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (err) {
    const e = fileError(dir, "list the folder", err);
    if (!onError) throw e;
    onError(e, dir);
    return;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.name.startsWith(".")) {
      onSkip({ file: path, reason: "hidden" });
    } else if (entry.isDirectory()) {
      yield* walk(path, root, onSkip, onError);
    } else if (entry.isFile() || entry.isSymbolicLink()) {
      let info;
      try {
        info = await stat(path);
      } catch (err) {
        const e = fileError(path, "read it", err);
        if (!onError) throw e;
        onError(e, path);
        continue;
      }
      if (info.isFile()) yield* classify(path, root, info.size, onSkip, path);
      else onSkip({ file: path, reason: "a symbolic link to a folder or special file (not followed)" });
    } else {
      onSkip({ file: path, reason: "not a regular file" });
    }
  }
}

function* classify(path: string, root: string, size: number, onSkip: (s: SkippedInput) => void, shown: string): Generator<SourceFile> {
  const kind = KINDS[extname(path).toLowerCase()];
  if (!kind) {
    onSkip({ file: shown, reason: `unsupported file type "${extname(basename(path)) || "(none)"}" (supported: ${SUPPORTED_EXTENSIONS.join(", ")})` });
    return;
  }
  yield { path, root, size, kind };
}

/** Refuses a file over the limit before any of it is read. */
export function checkSize(file: SourceFile, maxBytes: number): void {
  if (file.size > maxBytes) {
    throw new DocumentReadError(
      file.path,
      `file is ${formatBytes(file.size)}, over the ${formatBytes(maxBytes)} limit per file; split it (e.g. into several JSONL files) and ingest the parts`,
      { code: "EFBIG" },
    );
  }
}

/** Number and total size of the readable files under paths (for progress); problems are left to reading. */
export async function measureSources(paths: readonly string[]): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for await (const f of listSources(paths, () => undefined, () => undefined)) {
    files++;
    bytes += f.size;
  }
  return { files, bytes };
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${n} bytes`;
}
