import { readFileSync } from "node:fs";
import { join } from "node:path";
import { addonPath } from "@attr-rag/native";
import { nativeAddon } from "./loadAddon.js";

export interface LlamaBuild {
  /** The compiled addon (ATTR_RAG_NATIVE_ADDON overrides it). */
  readonly addonPath: string;
  /** The llama.cpp libraries it loaded (ATTR_RAG_LLAMA_LIB_DIR overrides them). */
  readonly libraryDir: string;
  /** The llama.cpp release of those libraries, from node-llama-cpp's build metadata ("" for a build from source). */
  readonly release: string;
}

/** Which addon and which llama.cpp libraries this process runs. */
export function llamaBuild(): LlamaBuild {
  const libraryDir = process.env.ATTR_RAG_LLAMA_LIB_DIR || nativeAddon().defaultLibraryDir;
  let release = "";
  try {
    const meta = JSON.parse(readFileSync(join(libraryDir, "_nlcBuildMetadata.json"), "utf8")) as { buildOptions?: { llamaCpp?: { repo?: string; release?: string } } };
    const l = meta.buildOptions?.llamaCpp;
    release = l?.release ? `${l.repo ?? "llama.cpp"} ${l.release}` : "";
  } catch {
    // A from-source build has no node-llama-cpp metadata.
  }
  return { addonPath, libraryDir, release };
}
