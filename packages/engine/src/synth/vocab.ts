// The real tokenizers for synthetic models come from llama.cpp's vocab-only GGUFs, which
// @attr-rag/native's build unpacks into native/.cache/llama.cpp/models. We copy every `tokenizer.*` key
// with its GGUF type, so llama.cpp tokenizes our random-weight model exactly as it would the real one.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { GgufError } from "../gguf/ggufError.js";
import { readGgufHeader } from "../gguf/readHeader.js";
import type { GgufValue } from "../gguf/types.js";
import { vocabFileOf } from "./architectures.js";
import type { SynthArch } from "./presets.js";
import { findRepoRoot } from "./repoPaths.js";

const VOCAB_DIR_IN_REPO = join("native", ".cache", "llama.cpp", "models");

/** `explicit` if given, else <repo>/native/.cache/llama.cpp/models. Throws when the directory is missing. */
export function resolveVocabDir(explicit?: string): string {
  const root = findRepoRoot();
  const dir = explicit ?? (root === undefined ? undefined : join(root, VOCAB_DIR_IN_REPO));
  if (dir === undefined) {
    throw new GgufError(`cannot find the attr-rag repository above this module to locate ${VOCAB_DIR_IN_REPO}; pass the vocab directory explicitly`);
  }
  if (!existsSync(dir)) {
    throw new GgufError(
      `llama.cpp vocab GGUFs not found in ${dir}; build @attr-rag/native first (npm run build -w @attr-rag/native), which unpacks them, or pass the directory that holds them`,
    );
  }
  return dir;
}

export interface Tokenizer {
  readonly source: string;
  readonly vocabSize: number;
  /** Every tokenizer.* key of the source file, in file order, types preserved. */
  readonly metadata: ReadonlyArray<readonly [string, GgufValue]>;
}

/** Reads the tokenizer keys of `arch`'s vocab GGUF from `vocabDir` (see resolveVocabDir). */
export async function loadTokenizer(arch: SynthArch, vocabDir?: string): Promise<Tokenizer> {
  const source = join(resolveVocabDir(vocabDir), vocabFileOf(arch));
  if (!existsSync(source)) {
    throw new GgufError(`${source} is missing; rebuild @attr-rag/native (npm run build -w @attr-rag/native) to unpack llama.cpp's vocab GGUFs`);
  }
  const header = await readGgufHeader(source);
  const metadata = [...header.metadata.entries()].filter(([key]) => key.startsWith("tokenizer."));
  const tokens = header.metadata.get("tokenizer.ggml.tokens");
  if (tokens?.type !== "array" || tokens.itemType !== "string") {
    throw new GgufError(`${source} has no tokenizer.ggml.tokens string array; it is not a llama.cpp vocab GGUF`);
  }
  return { source, vocabSize: tokens.value.length, metadata };
}
