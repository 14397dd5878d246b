import { EmbeddingError } from "../errors.js";
import type { Embedder } from "./Embedder.js";
import { GgufEmbedder, type GgufEmbedderOptions } from "./GgufEmbedder.js";
import { USE_LITE_ID, UseLiteEmbedder } from "./UseLiteEmbedder.js";

/** "use-lite" (the default, offline) or "gguf:/path/to/model.gguf". */
export type EmbedderSpec = "use-lite" | `gguf:${string}`;

/** Starts the embedder a spec names; an unknown spec is an error listing the valid forms. */
export async function createEmbedder(spec: string, options: GgufEmbedderOptions = {}): Promise<Embedder> {
  if (spec === "use-lite" || spec === USE_LITE_ID) return new UseLiteEmbedder();
  if (spec.startsWith("gguf:") && spec.length > "gguf:".length) return await GgufEmbedder.load(spec.slice("gguf:".length), options);
  throw new EmbeddingError(`unknown embedder "${spec}"; use "use-lite" or "gguf:/path/to/model.gguf"`);
}
