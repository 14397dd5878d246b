import { basename } from "node:path";
import { isSubjectToken } from "@attr-rag/contracts";

/**
 * The id a model is known by in the distributed mode (a NATS subject token): the file name without `.gguf`,
 * with characters a subject token cannot hold ('.', '*', '>', whitespace) replaced by '_'.
 * "qwen2.5-7b-instruct-q4_k_m.gguf" -> "qwen2_5-7b-instruct-q4_k_m".
 */
export function modelIdOf(path: string): string {
  const id = basename(path).replace(/\.gguf$/i, "").replace(/[.*>\s]/g, "_");
  if (!isSubjectToken(id)) throw new RangeError(`cannot make a model id from ${JSON.stringify(path)}; pass one explicitly`);
  return id;
}
