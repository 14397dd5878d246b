import type { EmbedTextsRequest, EmbedTextsResponse } from "@attr-rag/contracts";
import type { ServiceContext } from "./context.js";
import { invalidArgument } from "./ServiceError.js";
import { unaryHandler } from "./unaryHandler.js";

/**
 * EmbedTexts: the store's embedder on caller texts (answers for the cosine metric, sentences and chunks for
 * citations), so every process of a deployment embeds with the same model as the stored vectors.
 */
export async function embedTexts(ctx: ServiceContext, request: EmbedTextsRequest, signal: AbortSignal): Promise<EmbedTextsResponse> {
  const { texts } = request;
  const { maxEmbedTexts, maxDocumentBytes } = ctx.limits;
  if (texts.length > maxEmbedTexts) throw invalidArgument(`texts has ${texts.length} entries, more than the limit of ${maxEmbedTexts}; split the request`);
  let bytes = 0;
  texts.forEach((t, i) => {
    if (t.trim().length === 0) throw invalidArgument(`texts[${i}] is empty; only non-empty texts can be embedded`);
    bytes += Buffer.byteLength(t, "utf8");
  });
  if (bytes > maxDocumentBytes) throw invalidArgument(`texts hold ${bytes} bytes, more than the limit of ${maxDocumentBytes} per request; split the request`);
  const vectors = texts.length === 0 ? [] : await ctx.embedder.embed(texts, signal);
  return { embeddings: vectors.map((v) => ({ values: Array.from(v) })), embedder: ctx.embedder.id };
}

export function embedTextsHandler(ctx: ServiceContext) {
  return unaryHandler<EmbedTextsRequest, EmbedTextsResponse>(ctx, "EmbedTexts", (request, signal) => embedTexts(ctx, request, signal));
}
