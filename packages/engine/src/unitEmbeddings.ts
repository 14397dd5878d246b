// One way to embed with a GGUF model, for every place that does: the index's in-process GgufEmbedder and
// the workers' embed jobs open the same context and batch, truncate and normalise the same way, so a store's
// vectors are the same wherever its chunks were embedded (up to floating point).
import type { EngineContext } from "./EngineContext.js";
import type { Model } from "./Model.js";

export interface EmbedContextOptions {
  /** Longest input in tokens; longer texts are truncated. Default 512 (BERT-family limit). */
  readonly maxTokens?: number;
  /** Texts per native call. Default 16. */
  readonly batchSize?: number;
  readonly threads?: number;
}

/**
 * An embed-kind context on `model` sized for `batchSize` texts of `maxTokens`; a model without a pooling
 * type of its own (a decoder such as llama) is mean-pooled.
 */
export async function openEmbedContext(model: Model, options: EmbedContextOptions = {}): Promise<{ context: EngineContext; batchSize: number }> {
  const maxTokens = options.maxTokens ?? 512;
  const batchSize = options.batchSize ?? 16;
  const settings = {
    kind: "embed" as const,
    contextSize: maxTokens * batchSize,
    batchSize: maxTokens,
    ubatchSize: maxTokens,
    sequences: batchSize,
    ...(options.threads ? { threads: options.threads } : {}),
  };
  let context = await model.createContext(settings);
  if (context.info.pooling <= 0) {
    await context.dispose();
    context = await model.createContext({ ...settings, pooling: "mean" });
  }
  return { context, batchSize };
}

/** Unit-length embeddings of `texts` in order, `batchSize` per native call (an empty text embeds as " "). */
export async function unitEmbeddings(context: EngineContext, texts: readonly string[], batchSize: number, signal?: AbortSignal): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  for (let start = 0; start < texts.length; start += batchSize) {
    const batch = texts.slice(start, start + batchSize).map((t) => (t.trim() === "" ? " " : t));
    const vectors = await context.embed(batch, { truncate: true, ...(signal ? { signal } : {}) });
    for (const v of vectors) out.push(l2Normalize(Float32Array.from(v)));
  }
  return out;
}

/** Scales v to unit length in place (a zero vector is returned as is: the store rejects it). */
export function l2Normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = v[i]! / norm;
  return v;
}
