import type { SelectionRequest, SelectionResult } from "@attr-rag/contracts";
import type { SelectorDeps } from "./selectorDeps.js";
import { selectSets } from "./selectSets.js";

export type { SelectorDeps } from "./selectorDeps.js";

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
