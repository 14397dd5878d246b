import type { ContextHandle } from "./contextHandle.js";
import { EngineArgumentError, EngineLimitError } from "./errors.js";
import type { NativeContext } from "./native/addonTypes.js";

export interface EmbedOptions {
  /** Cut inputs longer than the context's micro-batch instead of failing. Default false. */
  truncate?: boolean;
  signal?: AbortSignal;
}

export type RerankOptions = EmbedOptions;

function fit(context: ContextHandle, tokens: Int32Array, index: number, truncate: boolean): Int32Array {
  const max = Math.min(context.options.batchSize, context.options.ubatchSize);
  if (tokens.length === 0) throw new EngineArgumentError(`input ${index} is empty after tokenization`);
  if (tokens.length <= max) return tokens;
  if (truncate) return tokens.slice(0, max);
  throw new EngineLimitError(`input ${index} has ${tokens.length} tokens; this context embeds at most ${max} (raise batchSize/ubatchSize or pass truncate: true)`);
}

/** Pooled sentence embeddings, one per text. */
export async function embedTexts(context: ContextHandle, native: NativeContext, texts: readonly string[], o: EmbedOptions): Promise<Float32Array[]> {
  if (texts.some((t) => typeof t !== "string")) throw new EngineArgumentError("embed: every input must be a string");
  if (texts.length === 0) return [];
  const seqs = texts.map((t, i) => fit(context, context.model.tokenize(t, { addSpecial: true }), i, o.truncate ?? false));
  return (await native.embed(seqs)).vectors;
}

/**
 * Relevance of each document to the query from a GGUF reranker (rank pooling). The input layout follows
 * llama.cpp's server: the model's "rerank" template when it has one, else [BOS] query [EOS] [SEP] doc [EOS].
 */
export async function rerankDocuments(
  context: ContextHandle,
  native: NativeContext,
  query: string,
  documents: readonly string[],
  o: RerankOptions,
): Promise<number[]> {
  if (typeof query !== "string" || query.trim() === "") throw new EngineArgumentError("rerank: the query is empty");
  if (documents.length === 0) return [];
  const model = context.model;
  const info = model.info;
  const seqs = documents.map((doc, i) => {
    let tokens: Int32Array;
    if (info.rerankTemplate) {
      const text = info.rerankTemplate.replaceAll("{query}", query).replaceAll("{document}", doc);
      tokens = model.tokenize(text, { addSpecial: false, parseSpecial: true });
    } else {
      const ids: number[] = [];
      if (info.bos >= 0) ids.push(info.bos);
      ids.push(...model.tokenize(query));
      if (info.eos >= 0) ids.push(info.eos);
      if (info.sep >= 0) ids.push(info.sep);
      ids.push(...model.tokenize(doc));
      if (info.eos >= 0) ids.push(info.eos);
      tokens = Int32Array.from(ids);
    }
    return fit(context, tokens, i, o.truncate ?? false);
  });
  return (await native.embed(seqs)).vectors.map((v) => v[0]!);
}
