import { loadNativeAddon } from "@attr-rag/native";
import type { NativeAddon } from "./addonTypes.js";

let addon: NativeAddon | undefined;

/**
 * The addon, loaded and initialised once per process. ATTR_RAG_LLAMA_LIB_DIR points at other llama.cpp
 * libraries (e.g. a CUDA build); ATTR_RAG_LLAMA_LOG sets llama.cpp's log level (default 0 = silent: its errors reach callers inside our error messages; 2 info, 3 warnings, 4 errors).
 */
export function nativeAddon(): NativeAddon {
  if (addon) return addon;
  const loaded = loadNativeAddon() as NativeAddon;
  const level = Number(process.env.ATTR_RAG_LLAMA_LOG ?? 0);
  loaded.setLogLevel(Number.isInteger(level) && level >= 0 && level <= 5 ? level : 0);
  loaded.init(process.env.ATTR_RAG_LLAMA_LIB_DIR || undefined);
  addon = loaded;
  return addon;
}
