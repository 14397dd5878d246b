// A results file that a reader can stop and resume: rows are appended and flushed to disk as they arrive, a
// half-written last row (a crash mid-write) is cut off on reopening, any other line that is not a row is an
// error naming it, and an item already in the file is never written again.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, truncateSync, writeSync } from "node:fs";
import type { BatchItemResult } from "@attr-rag/contracts";
import { openaiRow, resultRow } from "@attr-rag/batch";
import { CliError } from "../cliError.js";

/** Our result rows (docs/batches.md), or the OpenAI Batch output shape. */
export type ResultsFormat = "rows" | "openai";
export const RESULTS_FORMATS: readonly ResultsFormat[] = ["rows", "openai"];

/** The field that names a line's item in each format. */
const KEY: Record<ResultsFormat, "id" | "custom_id"> = { rows: "id", openai: "custom_id" };

export class ResultsFile {
  readonly ids = new Set<string>();
  /** Ids in file order. */
  readonly order: string[] = [];
  #fd: number | undefined;

  private constructor(
    readonly path: string,
    readonly format: ResultsFormat,
  ) {}

  /** Opens (or creates) the file, reading the item ids it already holds (lines of `format`). */
  static open(path: string, format: ResultsFormat = "rows"): ResultsFile {
    const file = new ResultsFile(path, format);
    const key = KEY[format];
    if (existsSync(path)) {
      let text: string;
      try {
        text = readFileSync(path, "utf8");
      } catch (err) {
        throw new CliError(`--out: cannot read ${path}: ${(err as Error).message}`, 1, { cause: err });
      }
      // Only the text after the last newline can be a row cut short by a crash; every line before it was
      // written whole, so one that does not parse is damage this must not paper over by cutting valid rows.
      const lines = text.split("\n");
      const tail = lines.pop()!;
      lines.forEach((line, i) => {
        if (line.trim() === "") return;
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(line) as Record<string, unknown>;
        } catch {
          throw new CliError(`--out: ${path} line ${i + 1} is not JSON (${JSON.stringify(line.slice(0, 60))}); fix or remove that line, or pass another file`);
        }
        const id = parsed?.[key];
        if (typeof id !== "string" || (format === "rows" && "custom_id" in parsed)) {
          const other = format === "rows" ? "openai" : "rows";
          const hint = typeof parsed?.[KEY[other]] === "string" ? ` (it holds --format ${other} lines)` : "";
          throw new CliError(`--out: ${path} line ${i + 1} is not a --format ${format} result line (no "${key}")${hint}; pass another file`);
        }
        file.ids.add(id);
        file.order.push(id);
      });
      if (tail !== "") truncateSync(path, Buffer.byteLength(text, "utf8") - Buffer.byteLength(tail, "utf8"));
    }
    try {
      file.#fd = openSync(path, "a");
    } catch (err) {
      throw new CliError(`--out: cannot write ${path}: ${(err as Error).message}`, 1, { cause: err });
    }
    return file;
  }

  get count(): number {
    return this.order.length;
  }

  /** Appends the item's line unless the item is already in the file; true when written. */
  append(r: BatchItemResult): boolean {
    if (this.ids.has(r.itemId)) return false;
    writeSync(this.#fd!, `${JSON.stringify(this.format === "openai" ? openaiRow(r) : resultRow(r))}\n`);
    this.ids.add(r.itemId);
    this.order.push(r.itemId);
    return true;
  }

  /** Flushes what was written to the disk. */
  sync(): void {
    if (this.#fd !== undefined) fsyncSync(this.#fd);
  }

  close(): void {
    if (this.#fd === undefined) return;
    fsyncSync(this.#fd);
    closeSync(this.#fd);
    this.#fd = undefined;
  }
}
