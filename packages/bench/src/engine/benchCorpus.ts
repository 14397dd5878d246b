import { EngineArgumentError } from "@attr-rag/engine";
import { readFile } from "node:fs/promises";

/**
 * Reads the texts a benchmark cuts its context sets from: a corpus.jsonl ({"text": ...} per line, as in
 * SPEC section 5) or any plain-text / Markdown file.
 */
export async function readBenchCorpus(path: string): Promise<string[]> {
  let raw: string;
  try {
    raw = await readFile(path, "utf8");
  } catch (err) {
    throw new EngineArgumentError(`cannot read the corpus ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  if (path.endsWith(".jsonl")) {
    const texts: string[] = [];
    raw.split("\n").forEach((line, i) => {
      if (line.trim() === "") return;
      let doc: unknown;
      try {
        doc = JSON.parse(line);
      } catch {
        throw new EngineArgumentError(`${path}: line ${i + 1} is not valid JSON`);
      }
      const text = (doc as { text?: unknown }).text;
      if (typeof text !== "string") throw new EngineArgumentError(`${path}: line ${i + 1} has no string "text" field`);
      if (text.trim() !== "") texts.push(text);
    });
    return texts;
  }
  return raw.split(/\n\s*\n/).filter((p) => p.trim() !== "");
}
