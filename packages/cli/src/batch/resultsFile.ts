// A results file that a reader can stop and resume: rows are appended and flushed to disk as they arrive, a
// half-written last row (a crash mid-write) is cut off on reopening, any other line that is not a row is an
// error naming it, and an item already in the file is never written again.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, truncateSync, writeSync } from "node:fs";
import { CliError } from "../cliError.js";
import type { ResultRow } from "./resultRow.js";

export class ResultsFile {
  readonly ids = new Set<string>();
  /** Ids in file order. */
  readonly order: string[] = [];
  #fd: number | undefined;

  private constructor(readonly path: string) {}

  /** Opens (or creates) the file, reading the ids it already holds. */
  static open(path: string): ResultsFile {
    const file = new ResultsFile(path);
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
        let id: unknown;
        try {
          id = (JSON.parse(line) as { id?: unknown }).id;
        } catch {
          throw new CliError(`--out: ${path} line ${i + 1} is not JSON (${JSON.stringify(line.slice(0, 60))}); fix or remove that line, or pass another file`);
        }
        if (typeof id !== "string") throw new CliError(`--out: ${path} line ${i + 1} is not a batch result row (no "id"); pass another file`);
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

  /** Appends the row unless its item is already in the file; true when written. */
  append(row: ResultRow): boolean {
    if (this.ids.has(row.id)) return false;
    writeSync(this.#fd!, `${JSON.stringify(row)}\n`);
    this.ids.add(row.id);
    this.order.push(row.id);
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
