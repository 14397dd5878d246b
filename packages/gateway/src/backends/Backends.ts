import type { IndexBackend } from "@attr-rag/index";
import type { SelectorBackend } from "@attr-rag/selector";
import type { EngineJobs } from "@attr-rag/worker";

/** A GGUF cross-encoder: one relevance score per text. */
export interface RerankBackend {
  readonly id: string;
  rerank(question: string, texts: readonly string[], signal: AbortSignal): Promise<number[]>;
}

/**
 * The seam between the pipeline and where its work runs (ARCHITECTURE.md, "The seam"): runAsk and
 * runAttribute call these and never know whether they reach this process's store and engine (embedded) or
 * the index, workers and selector over NATS (distributed). Both sides speak the same protobuf messages.
 */
export interface Backends {
  /** Retrieval, chunks and the store's embedder. */
  readonly index: IndexBackend;
  /** Occlusion and generation jobs. */
  readonly engine: EngineJobs;
  /** Metrics, votes, selection and gap fill. */
  readonly selector: SelectorBackend;
  /** The cross-encoder re-ranker, when one is configured (else sets are re-ranked by the bi-encoder). */
  readonly reranker?: RerankBackend;
  /** The generator's model id, named in every engine job. */
  readonly modelId: string;
}
