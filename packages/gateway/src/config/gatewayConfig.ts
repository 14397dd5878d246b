import type { AttributionMetric } from "@attr-rag/core";

export type RetrievalModeName = "dense" | "bm25" | "hybrid";
export type StrategyName = "naive" | "prefix-shared" | "speculative";

/**
 * Everything the pipeline and the server can be configured with. Each field has a default (DEFAULT_CONFIG);
 * a config file, ATTR_RAG_* environment variables and command-line flags override it in that order.
 */
export interface GatewayConfig {
  /** Chunk store directory (made by `attr-rag ingest`); embedded mode only. */
  store: string;
  /** Generator GGUF (embedded), or the model id the workers serve (distributed, with `nats`). */
  model: string;
  /** Query/fallback-rerank embedder; must be the store's. "use-lite" or "gguf:PATH". */
  embedder: string;
  /** Optional GGUF cross-encoder (rank pooling). Without it sets are re-ranked by bi-encoder cosine. */
  reranker?: string;
  /** Retrieved chunks per question. */
  k: number;
  retrievalMode: RetrievalModeName;
  /** Attribution metrics (SPEC's six by default). */
  metrics: AttributionMetric[];
  tau: number;
  minVotes: number;
  epsilon: number;
  maxSets?: number;
  maxGap: number;
  /** Max new tokens per answer (A_full, every A_-j and the final answer). */
  maxTokens: number;
  strategy: StrategyName;
  /** CPU threads for the engine; 0 = all. */
  threads: number;
  /** Layers offloaded to a GPU backend when one is loaded; 0 = CPU, -1 = all. */
  gpuLayers: number;
  /** KV cells of the generator context, shared by its parallel sequences. */
  contextSize: number;
  /** Parallel sequences of the generator context (occluded answers decoded together). */
  sequences: number;
  /** Tokens per llama_decode call. */
  batchSize: number;
  /** Where each output row's greedy token, margin and log-probabilities are computed (see docs/engine.md). */
  sampling: "device" | "host";
  /** KV cache layout of the generator: one stream per sequence, or one cache all sequences share. */
  kvCache: "streams" | "unified";
  /** llama.cpp flash attention for the generator. */
  flashAttention: "off" | "on" | "auto";
  // Server limits.
  maxQuestionChars: number;
  maxK: number;
  maxMaxTokens: number;
  /**
   * Asks running at once. Embedded they share one engine context (default 1); distributed the JetStream queue
   * is the queue and the workers the limit, so the default lets many run (DISTRIBUTED_MAX_CONCURRENT_ASKS).
   */
  maxConcurrentAsks: number;
  /** Asks waiting for a slot; beyond this, RESOURCE_EXHAUSTED. */
  maxQueuedAsks: number;
  /** Embedded: threads BM25 searches run on (0: on the event loop). */
  searchThreads: number;
  /** Max context sets in an Attribute request. */
  maxAttributeSets: number;
  /** Max characters of an Attribute request's set texts and initial answer together. */
  maxAttributeChars: number;
  /** Embedded: directory of the gateway's durable state (batches.sqlite); default the store directory. */
  stateDir?: string;
  /**
   * Batch items this gateway runs at once; 0 = it runs none (another gateway does). Default: embedded
   * maxConcurrentAsks; distributed two per slot of the workers serving the model (asked every 10 s).
   */
  batchConcurrency?: number;
  /** Distributed: seconds a gateway may hold a batch item without a sign of life before another gateway takes it. */
  batchAckWait: number;
  /** Most items in one batch. */
  maxBatchItems: number;
  /** Largest request message in bytes (a CreateBatch carries all its items): the gRPC receive limit. */
  maxMessageBytes: number;
  /** Bearer token required in the `authorization` metadata of every AttrRagService/IndexService call. */
  authToken?: string;
  /** PEM certificate chain and key: serve TLS instead of plaintext. */
  tlsCert?: string;
  tlsKey?: string;
  /** Distributed mode: the NATS server(s) where the index, the workers and the selector are. */
  nats?: string;
  /**
   * Distributed: the index is split into this many shards (`attr-rag index serve --nats --shard i/S`); a search
   * goes to every shard and is merged here. Unset: one index (`attr-rag index serve --nats`).
   */
  indexShards?: number;
  /** NATS credentials and TLS (distributed mode). */
  natsCreds?: string;
  natsUser?: string;
  natsPass?: string;
  natsToken?: string;
  natsNkey?: string;
  natsTlsCa?: string;
  /** Batch webhooks: the Standard Webhooks signing secret ("whsec_…"), or a file holding it. Without one, CreateBatch refuses webhook_url. */
  webhookSecret?: string;
  webhookSecretFile?: string;
  /** Comma-separated hosts (as written in URLs) a webhook may call although they are internal (loopback, private, link-local). */
  webhookAllowedHosts?: string;
  /** Seconds a webhook delivery is retried (exponential backoff) before it is given up. */
  webhookRetryFor: number;
  /** First retry delay in milliseconds; it doubles after each failure, up to ten minutes. */
  webhookBackoffMs: number;
  /** The most one delivery attempt may take in milliseconds, from resolving the host to the answer's last byte. */
  webhookAttemptTimeoutMs: number;
}

export const DEFAULT_CONFIG: Omit<GatewayConfig, "store" | "model"> = {
  embedder: "use-lite",
  k: 30,
  // BM25-weighted hybrid: on the public chemistry sets it beats dense (USE-lite is weak on chemistry text).
  retrievalMode: "hybrid",
  metrics: ["cosine", "jaccard", "rouge1", "rouge2", "rougeL", "rougeLsum"],
  tau: 0.05,
  minVotes: 3,
  epsilon: 0.01,
  maxGap: 2,
  maxTokens: 512,
  strategy: "speculative",
  threads: 0,
  gpuLayers: 0,
  contextSize: 32_768,
  sequences: 4,
  batchSize: 512,
  // Chosen from bench throughput (docs/engine.md, "Reading output rows on the device").
  sampling: "device",
  kvCache: "streams",
  flashAttention: "off",
  maxQuestionChars: 4_000,
  maxK: 200,
  maxMaxTokens: 4_096,
  maxConcurrentAsks: 1,
  maxQueuedAsks: 8,
  searchThreads: 2,
  maxAttributeSets: 64,
  maxAttributeChars: 200_000,
  batchAckWait: 30,
  maxBatchItems: 100_000,
  maxMessageBytes: 64 * 1024 * 1024,
  webhookRetryFor: 86_400,
  webhookBackoffMs: 1_000,
  webhookAttemptTimeoutMs: 10_000,
};

/** maxConcurrentAsks when distributed and not configured: enough that the workers, not the gateway, are the limit. */
export const DISTRIBUTED_MAX_CONCURRENT_ASKS = 64;
/**
 * How many batch items an embedded gateway (or `batch run`) runs at once: batchConcurrency, else
 * maxConcurrentAsks. A distributed gateway without batchConcurrency follows its workers instead.
 */
export function batchConcurrencyOf(config: GatewayConfig): number {
  return config.batchConcurrency ?? config.maxConcurrentAsks;
}
