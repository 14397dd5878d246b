import type { EmbedTextsRequest, EmbedTextsResponse, GetChunksRequest, GetChunksResponse } from "@attr-rag/contracts";

/** What the selector needs of the index: the store's embedder (cosine) and chunks (gap fill). */
export interface SelectorDeps {
  embedTexts(request: EmbedTextsRequest, signal: AbortSignal): Promise<EmbedTextsResponse>;
  getChunks(request: GetChunksRequest, signal: AbortSignal): Promise<GetChunksResponse>;
}
