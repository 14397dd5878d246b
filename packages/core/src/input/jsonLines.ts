import { InputError } from "./inputError.js";

/** One parsed input line with its 1-based line number in the input (blank lines are skipped). */
export interface JsonLine {
  readonly line: number;
  readonly value: unknown;
}

/**
 * Parses all JSON lines before anything is processed, so bad input fails with the line's number and
 * no partial output. Blank lines (e.g. a trailing newline) are skipped.
 */
export function parseJsonLines(text: string): JsonLine[] {
  const out: JsonLine[] = [];
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    if (raw.trim() === "") return;
    try {
      out.push({ line: i + 1, value: JSON.parse(raw) });
    } catch (err) {
      throw new InputError(`line ${i + 1}: not valid JSON (${(err as Error).message})`, 2, { cause: err });
    }
  });
  return out;
}

/** Reads a required string field of a JSON-line object, naming the line when it is absent or not a string. */
export function stringField(entry: JsonLine, field: string): string {
  const obj = entry.value;
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
    throw new InputError(`line ${entry.line}: expected a JSON object, got ${Array.isArray(obj) ? "an array" : JSON.stringify(obj)}`);
  }
  const value = (obj as Record<string, unknown>)[field];
  if (typeof value !== "string") {
    throw new InputError(
      `line ${entry.line}: field "${field}" must be a string, got ${value === undefined ? "nothing" : JSON.stringify(value)}`,
    );
  }
  return value;
}
