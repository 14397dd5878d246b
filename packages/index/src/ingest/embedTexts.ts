import { EmbeddingError } from "../errors.js";
import type { EmbedderInfo, EmbedFunction } from "../types.js";

/**
 * Calls the embed function in batches and checks what comes back: one finite, non-zero vector of the
 * store's dimensions per text. A bad vector caught here is an error; stored, it would be silent garbage.
 */
export async function embedTexts(
  embed: EmbedFunction,
  texts: readonly string[],
  embedder: EmbedderInfo,
  batchSize: number,
): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += batchSize) {
    const batch = texts.slice(start, start + batchSize);
    let vectors: unknown;
    try {
      vectors = await embed(batch);
    } catch (err) {
      throw new EmbeddingError(`embedder "${embedder.id}" failed on ${batch.length} texts: ${(err as Error)?.message ?? String(err)}`, { cause: err });
    }
    if (!Array.isArray(vectors) || vectors.length !== batch.length) {
      const got = Array.isArray(vectors) ? `${vectors.length} vectors` : typeof vectors;
      throw new EmbeddingError(`embedder "${embedder.id}" returned ${got} for ${batch.length} texts; it must return one Float32Array per text`);
    }
    vectors.forEach((v, i) => out.push(checkVector(v, start + i, embedder)));
  }
  return out;
}

/** Vectors made elsewhere, checked as an embedder's are. */
export function checkVectors(vectors: readonly Float32Array[], embedder: EmbedderInfo): Float32Array[] {
  return vectors.map((v, i) => checkVector(v, i, embedder));
}

function checkVector(v: unknown, index: number, embedder: EmbedderInfo): Float32Array {
  if (!(v instanceof Float32Array)) {
    throw new EmbeddingError(`embedder "${embedder.id}" returned a ${describe(v)} for text ${index}; expected a Float32Array`);
  }
  if (v.length !== embedder.dimensions) {
    throw new EmbeddingError(
      `embedder "${embedder.id}" returned ${v.length} dimensions for text ${index}, but the store expects ${embedder.dimensions}`,
    );
  }
  let norm = 0;
  for (const x of v) {
    if (!Number.isFinite(x)) throw new EmbeddingError(`embedder "${embedder.id}" returned a non-finite value for text ${index}`);
    norm += x * x;
  }
  if (norm === 0) throw new EmbeddingError(`embedder "${embedder.id}" returned an all-zero vector for text ${index}; cosine search cannot rank it`);
  return v;
}

function describe(v: unknown): string {
  return v === null ? "null" : typeof v === "object" ? (v.constructor?.name ?? "object") : typeof v;
}
