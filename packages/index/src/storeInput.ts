// Store and embedder errors as input errors, for everything that opens a store on someone's behalf (the
// commands ingest, search, index serve; the eval harness): what the user fixes exits 2, the rest 1.
import { InputError } from "@attr-rag/core";
import { createEmbedder } from "./embedders/createEmbedder.js";
import type { Embedder } from "./embedders/Embedder.js";
import { EmbedderMismatchError, EmbeddingError, InvalidQueryError, StoreConfigMismatchError, StoreError, StoreNotFoundError } from "./errors.js";

/**
 * Store errors the user fixes by changing the command (wrong directory, embedder, query) exit 2; the rest
 * (a locked or damaged store, a failing embedder) exit 1. Other errors pass through unchanged.
 */
export function storeErrorAsInput(err: unknown): unknown {
  if (err instanceof StoreNotFoundError || err instanceof EmbedderMismatchError || err instanceof StoreConfigMismatchError || err instanceof InvalidQueryError) {
    return new InputError(err.message, 2, { cause: err });
  }
  if (err instanceof StoreError) return new InputError(err.message, 1, { cause: err });
  return err;
}

/** Starts the embedder a spec names; an unknown spec is a usage error. */
export async function startEmbedder(spec: string, threads?: number): Promise<Embedder> {
  try {
    return await createEmbedder(spec, threads !== undefined ? { threads } : {});
  } catch (err) {
    if (err instanceof EmbeddingError) throw new InputError(`--embedder: ${err.message}`, 2, { cause: err });
    throw err;
  }
}
