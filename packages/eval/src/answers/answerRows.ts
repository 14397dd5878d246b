// rows.jsonl: one line per question × method, appended and fsynced as each finishes, so a killed run loses at
// most the row in flight. --resume reads it back; a line cut off by the kill is dropped (and truncated away)
// and that row is simply run again.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, truncateSync, writeSync } from "node:fs";
import { ANSWER_METRICS, InputError, type AnswerScores, type JudgeVerdict } from "@attr-rag/core";

export interface AnswerRow {
  readonly question_id: string;
  readonly method: string;
  readonly answer: string;
  /** The chunks the final answer was generated from, in prompt order. */
  readonly context_ids: string[];
  readonly metrics: AnswerScores;
  /** Pipeline stage times from the Ask's done event, plus the whole call as seen by the harness. */
  readonly timings: Record<string, number>;
  readonly warnings?: string[];
  readonly judge?: JudgeVerdict & { readonly attempts: number };
}

export const rowKey = (questionId: string, method: string) => `${questionId}\u0000${method}`;

/** The complete rows already in `path` (none when it does not exist). A torn last line is cut from the file. */
export function readRows(path: string, log: (line: string) => void): AnswerRow[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, "utf8");
  // Each row is written as one line ending in "\n"; text after the last "\n" is a write the kill cut short.
  const complete = text.lastIndexOf("\n") + 1;
  if (complete < text.length) {
    log(`eval: ${path}: the last line is incomplete (the previous run was stopped while writing it); dropping it and running that row again`);
    truncateSync(path, Buffer.byteLength(text.slice(0, complete)));
  }
  const rows: AnswerRow[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  text
    .slice(0, complete)
    .split("\n")
    .forEach((line, i) => {
      if (line.trim() === "") return;
      try {
        const row = JSON.parse(line) as AnswerRow;
        if (typeof row.question_id !== "string" || typeof row.method !== "string" || typeof row.metrics !== "object" || row.metrics === null) throw new Error("no question_id, method or metrics");
        const bad = ANSWER_METRICS.find((m) => typeof row.metrics[m] !== "number" || !Number.isFinite(row.metrics[m]));
        if (bad !== undefined) throw new Error(`metrics.${bad} is not a finite number`);
        const key = rowKey(row.question_id, row.method);
        // Two runs writing one --out would leave the same row twice; counting it twice would skew the means.
        if (seen.has(key)) {
          duplicates++;
          return;
        }
        seen.add(key);
        rows.push(row);
      } catch (err) {
        throw new InputError(`--resume: ${path}: line ${i + 1} is not a row (${(err as Error).message}); fix or remove it`, 2, { cause: err });
      }
    });
  if (duplicates > 0) log(`eval: ${path}: ${duplicates} duplicate row(s) (the same question and method twice: two runs on one --out?) ignored; the first of each is kept`);
  return rows;
}

/** Appends rows, each fsynced before the next is started. */
export class RowWriter {
  readonly #fd: number;
  constructor(readonly path: string) {
    this.#fd = openSync(path, "a");
  }
  append(row: AnswerRow): void {
    writeSync(this.#fd, `${JSON.stringify(row)}\n`);
    fsyncSync(this.#fd);
  }
  close(): void {
    closeSync(this.#fd);
  }
}
