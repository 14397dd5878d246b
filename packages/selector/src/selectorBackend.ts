import type { EmbedTextsRequest, EmbedTextsResponse, GetChunksRequest, GetChunksResponse, SelectionRequest, SelectionResult } from "@attr-rag/contracts";
import { selectSets } from "./selectSets.js";

/** What the selector needs of the index: the store's embedder (cosine) and chunks (gap fill). */
export interface SelectorDeps {
  embedTexts(request: EmbedTextsRequest, signal: AbortSignal): Promise<EmbedTextsResponse>;
  getChunks(request: GetChunksRequest, signal: AbortSignal): Promise<GetChunksResponse>;
}

/**
 * The selector as the pipeline sees it. In-process (LocalSelector) it runs selectSets over the store; in
 * distributed mode a NATS client sends the same SelectionRequest to `attr-rag selector`, which runs the same
 * selectSets with the index reached over NATS.
 */
export interface SelectorBackend {
  select(request: SelectionRequest, signal: AbortSignal): Promise<SelectionResult>;
}

export class LocalSelector implements SelectorBackend {
  constructor(private readonly deps: SelectorDeps) {}

  select(request: SelectionRequest, signal: AbortSignal): Promise<SelectionResult> {
    return selectSets(request, this.deps, signal);
  }
}
