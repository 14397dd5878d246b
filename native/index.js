// Locates and loads the compiled addon. What the addon exports is documented and typed in
// packages/engine/src/native/addonTypes.ts; this package only builds and finds the binary.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

/** Path of the addon; ATTR_RAG_NATIVE_ADDON points at another build (e.g. the CUDA one). */
export const addonPath =
  process.env.ATTR_RAG_NATIVE_ADDON || join(import.meta.dirname, "build", "Release", "attr_rag_native.node");

export function loadNativeAddon() {
  if (!existsSync(addonPath)) {
    throw new Error(
      `the native llama.cpp addon is not built (${addonPath} is missing); run \`npm run build -w @attr-rag/native\``,
    );
  }
  return createRequire(import.meta.url)(addonPath);
}
