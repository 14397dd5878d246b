// A benchmark folder in the SPEC's format (section 5): corpus.jsonl + questions.jsonl. Every question is
// read and checked before any model work, so a bad line fails in a second, not an hour into a run.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { InputError, parseJsonLines } from "@attr-rag/core";

export interface BenchmarkQuestion {
  readonly id: string;
  readonly question: string;
  /** The gold answer every method is scored against. */
  readonly answer: string;
  readonly kind: string;
  readonly goldDocIds: readonly string[];
  readonly goldSpans: readonly string[];
}

export interface Benchmark {
  readonly dir: string;
  readonly corpusPath: string;
  readonly questionsPath: string;
  readonly questions: readonly BenchmarkQuestion[];
}

function requireFile(path: string, what: string): void {
  let ok = false;
  try {
    ok = statSync(path).isFile();
  } catch {
    ok = false;
  }
  if (!ok) throw new InputError(`--benchmark: ${path} is missing; a benchmark folder holds ${what} (SPEC section 5: corpus.jsonl and questions.jsonl)`, 2);
}

const stringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");

/** Reads `dir/questions.jsonl` (every line checked) and locates `dir/corpus.jsonl`. */
export function loadBenchmark(dir: string): Benchmark {
  const corpusPath = join(dir, "corpus.jsonl");
  const questionsPath = join(dir, "questions.jsonl");
  requireFile(corpusPath, "corpus.jsonl");
  requireFile(questionsPath, "questions.jsonl");
  const where = (line: number) => `--benchmark ${questionsPath}: line ${line}`;
  let lines;
  try {
    lines = parseJsonLines(readFileSync(questionsPath, "utf8"));
  } catch (err) {
    throw new InputError(`--benchmark ${questionsPath}: ${(err as Error).message}`, 2, { cause: err });
  }
  const seen = new Map<string, number>();
  const questions = lines.map(({ line, value }): BenchmarkQuestion => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new InputError(`${where(line)}: expected a JSON object`, 2);
    const o = value as Record<string, unknown>;
    for (const field of ["id", "question", "answer"]) {
      if (typeof o[field] !== "string" || (o[field] as string).trim() === "") {
        throw new InputError(`${where(line)}: field "${field}" must be a non-empty string, got ${o[field] === undefined ? "nothing" : JSON.stringify(o[field])}`, 2);
      }
    }
    const id = o["id"] as string;
    // Rows are keyed by question id: a duplicate would make --resume skip a question that was never asked.
    if (seen.has(id)) throw new InputError(`${where(line)}: id "${id}" was already used on line ${seen.get(id)}; question ids must be unique`, 2);
    seen.set(id, line);
    const gold = o["gold_doc_ids"] ?? [];
    const spans = o["gold_spans"] ?? [];
    if (!stringList(gold)) throw new InputError(`${where(line)}: field "gold_doc_ids" must be an array of strings`, 2);
    if (!stringList(spans)) throw new InputError(`${where(line)}: field "gold_spans" must be an array of strings`, 2);
    return {
      id,
      question: o["question"] as string,
      answer: o["answer"] as string,
      kind: typeof o["kind"] === "string" ? (o["kind"] as string) : "unknown",
      goldDocIds: [...new Set(gold)],
      goldSpans: spans,
    };
  });
  if (questions.length === 0) throw new InputError(`--benchmark ${questionsPath}: no questions in it`, 2);
  return { dir, corpusPath, questionsPath, questions };
}
