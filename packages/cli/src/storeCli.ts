// What every store-backed command (ingest, search, eval, index serve) needs from the index package, as CLI errors.
import { createEmbedder, EmbedderMismatchError, EmbeddingError, InvalidQueryError, StoreConfigMismatchError, StoreError, StoreNotFoundError, type Embedder } from "@attr-rag/index";
import { CliError } from "./cliError.js";

/**
 * Store errors the user fixes by changing the command (wrong directory, embedder, query) exit 2; the rest
 * (a locked or damaged store, a failing embedder) exit 1. Other errors pass through unchanged.
 */
export function storeErrorToCli(err: unknown): unknown {
  if (err instanceof StoreNotFoundError || err instanceof EmbedderMismatchError || err instanceof StoreConfigMismatchError || err instanceof InvalidQueryError) {
    return new CliError(err.message, 2, { cause: err });
  }
  if (err instanceof StoreError) return new CliError(err.message, 1, { cause: err });
  return err;
}

/** Starts the embedder a spec names; an unknown spec is a usage error. */
export async function startEmbedder(spec: string, threads?: number): Promise<Embedder> {
  try {
    return await createEmbedder(spec, threads !== undefined ? { threads } : {});
  } catch (err) {
    if (err instanceof EmbeddingError) throw new CliError(`--embedder: ${err.message}`, 2, { cause: err });
    throw err;
  }
}
