import { fileError } from "./fileErrors.js";
import { checkSize, DEFAULT_MAX_FILE_BYTES, listSources } from "./listSources.js";
import { readJsonl } from "./readJsonl.js";
import { readPdf } from "./readPdf.js";
import { readText } from "./readText.js";
import type { ReadDocument, ReadOptions, SkippedInput, SourceFile } from "./types.js";

function readSource(file: SourceFile, onSkip: (s: SkippedInput) => void): AsyncGenerator<ReadDocument> {
  switch (file.kind) {
    case "jsonl":
      return readJsonl(file, onSkip);
    case "pdf":
      return readPdf(file);
    case "text":
    case "markdown":
      return readText(file, onSkip);
  }
}

/**
 * Documents from files and folders (.jsonl corpus lines, .txt, .md, .pdf), lazily and one file at a time,
 * so memory stays bounded by the largest document. Skips (hidden, unsupported, empty) go to onSkip; a
 * failing file goes to onError and reading continues — without onError the first failure is thrown.
 */
export async function* readDocuments(paths: readonly string[], options: ReadOptions = {}): AsyncGenerator<ReadDocument> {
  const onSkip = options.onSkip ?? (() => undefined);
  const maxBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  for await (const file of listSources(paths, onSkip, options.onError)) {
    try {
      checkSize(file, maxBytes);
      if (file.size === 0) {
        onSkip({ file: file.path, reason: "empty file" });
        continue;
      }
      yield* readSource(file, onSkip);
    } catch (err) {
      const e = fileError(file.path, "read it", err);
      if (!options.onError) throw e;
      options.onError(e, file.path);
    }
  }
}
