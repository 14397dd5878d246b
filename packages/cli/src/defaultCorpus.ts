import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { CliError } from "./cliError.js";

/** The demo corpus shipped in examples/ (found relative to this file in the repository). */
export function defaultCorpus(): string {
  const demo = fileURLToPath(new URL("../../../examples/demo-corpus/corpus.jsonl", import.meta.url));
  if (existsSync(demo)) return demo;
  throw new CliError("no corpus given and the demo corpus (examples/demo-corpus/corpus.jsonl) is missing; pass --corpus FILE");
}
