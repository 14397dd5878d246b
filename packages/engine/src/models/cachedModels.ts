// What `attr-rag models list` shows: each GGUF in a directory with the facts a user picks a model by, read
// from its header (nothing is loaded into llama.cpp), and the partial downloads a pull would resume.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { readGgufHeader } from "../gguf/readHeader.js";
import type { GgufHeader } from "../gguf/types.js";
import { listCachedNames } from "./modelLocator.js";

export interface CachedModel {
  readonly name: string;
  readonly path: string;
  readonly bytes: number;
  /** general.architecture, e.g. "qwen2". */
  readonly architecture: string | undefined;
  /** Sum of every tensor's elements. */
  readonly parameters: number | undefined;
  /** general.file_type as llama.cpp names it (Q4_K_M, F16, …), or the dominant tensor type. */
  readonly quantization: string | undefined;
  /** <arch>.context_length: the context the model was trained for. */
  readonly contextLength: number | undefined;
  /** Set when the header could not be read (not a GGUF, truncated). */
  readonly error?: string;
}

export interface PartialDownload {
  readonly name: string;
  readonly bytes: number;
}

/** llama_ftype (llama.h) → the quantization names llama.cpp prints. */
const FILE_TYPES: Readonly<Record<number, string>> = {
  0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M",
  13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS",
  21: "Q2_K_S", 22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S",
  29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE", 39: "NVFP4",
  40: "Q1_0", 41: "Q2_0",
};
/** LLAMA_FTYPE_GUESSED: set on top of the type when the converter guessed it. */
const FILE_TYPE_GUESSED = 1024;

export async function listCachedModels(dir: string): Promise<{ models: CachedModel[]; partial: PartialDownload[] }> {
  if (!existsSync(dir)) return { models: [], partial: [] };
  const models: CachedModel[] = [];
  for (const name of listCachedNames(dir)) models.push(await describeModel(join(dir, name), name));
  const partial = readdirSync(dir)
    .filter((n) => n.endsWith(".gguf.partial"))
    .sort()
    .map((n) => ({ name: n.slice(0, -".partial".length), bytes: statSync(join(dir, n)).size }));
  return { models, partial };
}

export async function describeModel(path: string, name: string): Promise<CachedModel> {
  const bytes = statSync(path).size;
  try {
    const header = await readGgufHeader(path);
    const architecture = stringOf(header, "general.architecture");
    return {
      name,
      path,
      bytes,
      architecture,
      parameters: header.tensors.reduce((sum, t) => sum + t.shape.reduce((a, b) => a * b, 1), 0),
      quantization: quantizationOf(header),
      contextLength: architecture === undefined ? undefined : numberOf(header, `${architecture}.context_length`),
    };
  } catch (err) {
    return { name, path, bytes, architecture: undefined, parameters: undefined, quantization: undefined, contextLength: undefined, error: (err as Error).message };
  }
}

function quantizationOf(header: GgufHeader): string | undefined {
  const fileType = numberOf(header, "general.file_type");
  if (fileType !== undefined) {
    const type = fileType & ~FILE_TYPE_GUESSED;
    return `${FILE_TYPES[type] ?? `file type ${type}`}${fileType & FILE_TYPE_GUESSED ? " (guessed)" : ""}`;
  }
  // Older converters leave file_type out: the type holding most of the weights says it.
  const byType = new Map<string, number>();
  for (const t of header.tensors) byType.set(t.type, (byType.get(t.type) ?? 0) + t.byteSize);
  return [...byType.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}

function stringOf(header: GgufHeader, key: string): string | undefined {
  const v = header.metadata.get(key);
  return v?.type === "string" ? v.value : undefined;
}

function numberOf(header: GgufHeader, key: string): number | undefined {
  const v = header.metadata.get(key);
  if (v === undefined || v.type === "string" || v.type === "array" || v.type === "bool") return undefined;
  return Number(v.value);
}
