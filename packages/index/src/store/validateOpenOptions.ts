import { StoreError } from "../errors.js";
import { normalizeChunker } from "../sqlite/storeConfig.js";
import type { OpenStoreOptions } from "../types.js";

/** Largest vector we accept: far above any text embedder, low enough to catch a length passed in bytes. */
const MAX_DIMENSIONS = 16_384;

export const DEFAULT_SAVE_EVERY = 100;
export const DEFAULT_EMBED_BATCH_SIZE = 64;

/** Rejects malformed options before the directory is touched. */
export function validateOpenOptions(options: OpenStoreOptions): void {
  const { embedder, embed, chunker, quantization, saveEvery, embedBatchSize, postingsBatch, bm25OwnScan } = options;
  if (embedder !== undefined) {
    if (typeof embedder.id !== "string" || embedder.id.trim().length === 0) {
      throw new StoreError("ChunkStore.open: embedder.id must be a non-empty string naming the embedding model");
    }
    if (!Number.isInteger(embedder.dimensions) || embedder.dimensions < 1 || embedder.dimensions > MAX_DIMENSIONS) {
      throw new StoreError(`ChunkStore.open: embedder.dimensions must be an integer from 1 to ${MAX_DIMENSIONS}, got ${String(embedder.dimensions)}`);
    }
  }
  if (embed !== undefined && typeof embed !== "function") throw new StoreError("ChunkStore.open: embed must be a function (texts) => Promise<Float32Array[]>");
  if (chunker !== undefined) normalizeChunker(chunker);
  if (quantization !== undefined && quantization !== "f32" && quantization !== "f16") {
    throw new StoreError(`ChunkStore.open: quantization must be "f32" or "f16", got ${JSON.stringify(quantization)}`);
  }
  if (bm25OwnScan !== undefined && (!Number.isInteger(bm25OwnScan) || bm25OwnScan < 0)) {
    throw new StoreError(`ChunkStore.open: bm25OwnScan must be a non-negative integer, got ${String(bm25OwnScan)}`);
  }
  for (const [name, value] of [["saveEvery", saveEvery], ["embedBatchSize", embedBatchSize], ["postingsBatch", postingsBatch]] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) {
      throw new StoreError(`ChunkStore.open: ${name} must be a positive integer, got ${String(value)}`);
    }
  }
}
