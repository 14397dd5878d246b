import { createReadStream } from "node:fs";
import { DocumentReadError } from "../../errors.js";
import type { DocumentInput } from "../../types.js";
import { fileError } from "./fileErrors.js";
import type { ReadDocument, SkippedInput, SourceFile } from "./types.js";
import { decodeUtf8 } from "./utf8.js";

/** Lines as raw bytes with their 1-based number and byte offset; memory is bounded by the longest line. */
async function* byteLines(path: string): AsyncGenerator<{ bytes: Buffer; line: number; offset: number; end: number }> {
  let carry: Buffer = Buffer.alloc(0);
  let offset = 0;
  let line = 0;
  for await (const chunk of createReadStream(path)) {
    let buf = carry.length > 0 ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer);
    let nl: number;
    while ((nl = buf.indexOf(0x0a)) >= 0) {
      line++;
      yield { bytes: buf.subarray(0, nl), line, offset, end: offset + nl + 1 };
      offset += nl + 1;
      buf = buf.subarray(nl + 1);
    }
    carry = Buffer.from(buf);
  }
  if (carry.length > 0) yield { bytes: carry, line: line + 1, offset, end: offset + carry.length };
}

function field(obj: Record<string, unknown>, name: string, file: string, line: number, required: boolean): string | undefined {
  const value = obj[name];
  if (value === undefined || value === null) {
    if (required) throw new DocumentReadError(file, `line ${line}: field "${name}" is missing; every line needs {"id","text"} (title, source, license optional)`);
    return undefined;
  }
  if (typeof value !== "string") throw new DocumentReadError(file, `line ${line}: field "${name}" must be a string, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * SPEC section 5 corpus lines `{"id","title","text","source","license"}`, one document per line, read
 * lazily. Blank lines are ignored; a document with empty text is skipped (onSkip). Bad JSON, a missing
 * id/text or invalid UTF-8 stops the file with an error naming the line (documents before it were read).
 */
export async function* readJsonl(file: SourceFile, onSkip: (s: SkippedInput) => void): AsyncGenerator<ReadDocument> {
  try {
    for await (const { bytes, line, offset, end } of byteLines(file.path)) {
      const raw = decodeUtf8(bytes, file.path, offset);
      if (raw.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (err) {
        throw new DocumentReadError(file.path, `line ${line}: not valid JSON (${(err as Error).message})`, { cause: err });
      }
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        throw new DocumentReadError(file.path, `line ${line}: expected a JSON object {"id","text",...}`);
      }
      const obj = value as Record<string, unknown>;
      const id = field(obj, "id", file.path, line, true)!;
      if (id.trim() === "") throw new DocumentReadError(file.path, `line ${line}: field "id" is empty`);
      const text = field(obj, "text", file.path, line, true)!;
      if (text.trim() === "") {
        onSkip({ file: file.path, id, reason: `line ${line}: document "${id}" has no text` });
        continue;
      }
      const document: DocumentInput = {
        id,
        text,
        title: field(obj, "title", file.path, line, false),
        source: field(obj, "source", file.path, line, false),
        license: field(obj, "license", file.path, line, false),
      };
      yield { document, file: file.path, bytesRead: Math.min(end, file.size), fileSize: file.size };
    }
  } catch (err) {
    throw fileError(file.path, "read it", err);
  }
}
