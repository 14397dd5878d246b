import { loadNativeAddon } from "@attr-rag/native";
import type { NativeAddon } from "./addonTypes.js";
import { logger } from "@attr-rag/telemetry";
import { parseGpuChoice, selectGpuBackend, type BackendSelection } from "./gpuBackend.js";

let addon: NativeAddon | undefined;
let selection: BackendSelection | undefined;
let selectionError: Error | undefined;

/**
 * The addon, loaded and initialised once per process, with the GPU backend ATTR_RAG_GPU chooses (see
 * gpuBackend.ts). ATTR_RAG_LLAMA_LIB_DIR points at other llama.cpp libraries (e.g. a CUDA build from source);
 * ATTR_RAG_LLAMA_LOG sets llama.cpp's log level (default 0 = silent: its errors reach callers inside our error
 * messages; 2 info, 3 warnings, 4 errors). Throws GpuBackendError when the GPU asked for cannot be used.
 */
export function nativeAddon(): NativeAddon {
  if (selectionError) throw selectionError;
  if (addon) return addon;
  const loaded = loadNativeAddon() as NativeAddon;
  const level = Number(process.env.ATTR_RAG_LLAMA_LOG ?? 0);
  loaded.setLogLevel(Number.isInteger(level) && level >= 0 && level <= 5 ? level : 0);
  const libDir = process.env.ATTR_RAG_LLAMA_LIB_DIR || undefined;
  loaded.init(libDir);
  try {
    selection = selectGpuBackend(loaded, parseGpuChoice(process.env.ATTR_RAG_GPU), libDir);
  } catch (err) {
    selectionError = err as Error;
    throw err;
  }
  // One line on stderr whenever there was a GPU decision to make (a GPU package installed, or ATTR_RAG_GPU
  // set): which backend runs the models, and why the others did not. A CPU-only install stays quiet.
  const decided = process.env.ATTR_RAG_GPU !== undefined || selection.backend !== "cpu" || selection.installed.length > 0;
  if (decided) logger("engine").info(selection.summary);
  addon = loaded;
  return addon;
}

/** What runs the models in this process (loads the addon and chooses the backend on first call). */
export function backendSelection(): BackendSelection {
  nativeAddon();
  return selection!;
}
