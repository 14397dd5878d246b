import { readFile } from "node:fs/promises";
import { basename, relative, sep } from "node:path";
import { fileError } from "./fileErrors.js";
import type { ReadDocument, SkippedInput, SourceFile } from "./types.js";
import { decodeUtf8 } from "./utf8.js";

/** Document id of a file: its path relative to the root it was found under, with "/" separators. */
export function documentId(file: SourceFile): string {
  return relative(file.root, file.path).split(sep).join("/");
}

/** The first ATX heading ("# Title") of a Markdown text, if any. */
export function markdownTitle(text: string): string | undefined {
  const m = /^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/m.exec(text);
  return m?.[1]?.trim() || undefined;
}

/** A .txt or .md file as one document (title: the first Markdown heading, else the file name). */
export async function* readText(file: SourceFile, onSkip: (s: SkippedInput) => void): AsyncGenerator<ReadDocument> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file.path);
  } catch (err) {
    throw fileError(file.path, "read it", err);
  }
  const text = decodeUtf8(bytes, file.path);
  if (text.trim() === "") {
    onSkip({ file: file.path, reason: "empty document (no text)" });
    return;
  }
  const title = (file.kind === "markdown" ? markdownTitle(text) : undefined) ?? basename(file.path);
  yield { document: { id: documentId(file), text, title, source: file.path }, file: file.path, bytesRead: file.size, fileSize: file.size };
}
