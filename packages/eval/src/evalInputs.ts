// The inputs of every evaluation (SPEC section 5 files: questions.jsonl and corpus.jsonl), read and checked
// before any work is done, and the corpus ingested into a store.
import { createReadStream, statSync } from "node:fs";
import { createInterface } from "node:readline";
import { readDocuments, type ChunkStore, type Embedder } from "@attr-rag/index";
import { progressBar } from "@attr-rag/telemetry";
import { InputError } from "@attr-rag/core";

/** One question of a SPEC section 5 `questions.jsonl`, as evaluation needs it. */
export interface EvalQuestion {
  readonly id: string;
  readonly line: number;
  readonly question: string;
  /** Empty for negative questions (no gold document): counted, not scored. */
  readonly gold: readonly string[];
}

function checkReadableFile(option: string, path: string): void {
  let isFile: boolean;
  try {
    isFile = statSync(path).isFile();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new InputError(`${option} ${path}: cannot read it (${code === "ENOENT" ? "no such file" : (code ?? (err as Error).message)})`, 2, { cause: err });
  }
  if (!isFile) throw new InputError(`${option} ${path}: not a file`);
}

/** Non-blank lines of a file with their 1-based numbers, streamed; JSON parse errors name the file and line. */
async function* jsonLinesOf(option: string, path: string): AsyncGenerator<{ line: number; value: unknown }> {
  const rl = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  try {
    for await (const raw of rl) {
      line++;
      if (raw.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (err) {
        throw new InputError(`${option} ${path}: line ${line}: not valid JSON (${(err as Error).message})`, 2, { cause: err });
      }
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        throw new InputError(`${option} ${path}: line ${line}: expected a JSON object, got ${Array.isArray(value) ? "an array" : JSON.stringify(value)}`);
      }
      yield { line, value };
    }
  } catch (err) {
    if (err instanceof InputError) throw err;
    throw new InputError(`${option} ${path}: cannot read it (${(err as Error).message})`, 2, { cause: err });
  } finally {
    rl.close();
  }
}

/** Reads and checks every question before any work is done. */
export async function loadQuestions(path: string): Promise<EvalQuestion[]> {
  checkReadableFile("--questions", path);
  const out: EvalQuestion[] = [];
  const where = (line: number) => `--questions ${path}: line ${line}`;
  for await (const { line, value } of jsonLinesOf("--questions", path)) {
    const obj = value as Record<string, unknown>;
    const question = obj["question"];
    if (typeof question !== "string") {
      throw new InputError(`${where(line)}: field "question" must be a string, got ${question === undefined ? "nothing" : JSON.stringify(question)}`);
    }
    if (question.trim() === "") throw new InputError(`${where(line)}: field "question" is empty`);
    const rawId = obj["id"];
    if (rawId !== undefined && typeof rawId !== "string" && typeof rawId !== "number") {
      throw new InputError(`${where(line)}: field "id" must be a string, got ${JSON.stringify(rawId)}`);
    }
    const gold = obj["gold_doc_ids"] ?? [];
    if (!Array.isArray(gold) || gold.some((g) => typeof g !== "string")) {
      throw new InputError(`${where(line)}: field "gold_doc_ids" must be an array of strings, got ${JSON.stringify(gold)}`);
    }
    out.push({ id: rawId === undefined ? `line ${line}` : String(rawId), line, question, gold: [...new Set(gold as string[])] });
  }
  if (out.length === 0) throw new InputError(`--questions ${path}: no questions in it`);
  return out;
}

/** Checks every corpus line ({"id","text"} strings) up front, so bad input stops before a store is touched. */
export async function scanCorpus(path: string): Promise<{ documents: number; ids: Set<string> }> {
  checkReadableFile("--corpus", path);
  const ids = new Set<string>();
  let documents = 0;
  for await (const { line, value } of jsonLinesOf("--corpus", path)) {
    const obj = value as Record<string, unknown>;
    for (const field of ["id", "text"]) {
      if (typeof obj[field] !== "string") {
        throw new InputError(
          `--corpus ${path}: line ${line}: field "${field}" must be a string, got ${obj[field] === undefined ? "nothing" : JSON.stringify(obj[field])}`,
        );
      }
    }
    if ((obj["id"] as string).trim() === "") throw new InputError(`--corpus ${path}: line ${line}: field "id" is empty`);
    documents++;
    if ((obj["text"] as string).trim() !== "") ids.add(obj["id"] as string);
  }
  if (documents === 0) throw new InputError(`--corpus ${path}: no documents in it`);
  return { documents, ids };
}

/** Ingests the corpus (unchanged documents are no-ops), with a progress bar on stderr. */
export async function ingestCorpus(store: ChunkStore, embedder: Embedder, path: string): Promise<{ written: number; unchanged: number }> {
  const size = statSync(path).size;
  const bar = progressBar("eval: ingest");
  let written = 0;
  let unchanged = 0;
  const problems: string[] = [];
  for await (const item of readDocuments([path], {
    onSkip: () => {
      // Documents with empty text: nothing to retrieve; scanCorpus left them out of the id set.
    },
    onError: (err) => {
      problems.push(err.message);
    },
  })) {
    const result = await store.upsertDocument(item.document, (texts) => embedder.embed(texts));
    if (result.status === "indexed" || result.status === "replaced") written++;
    else unchanged++;
    bar.update(Math.round(item.bytesRead / 1024), Math.max(1, Math.round(size / 1024)), `KB, ${written + unchanged} documents`);
  }
  bar.done();
  if (problems.length > 0) throw new InputError(`--corpus ${path}: ${problems.join("; ")}`);
  return { written, unchanged };
}
