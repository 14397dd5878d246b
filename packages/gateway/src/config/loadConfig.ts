import { readFileSync } from "node:fs";
import { ATTRIBUTION_METRICS, isAttributionMetric } from "@attr-rag/core";
import { isSubjectToken, MAX_INDEX_SHARDS } from "@attr-rag/contracts";
import { MAX_QUERY_CHARS } from "@attr-rag/index";
import { ConfigError } from "./ConfigError.js";
import { DEFAULT_CONFIG, DISTRIBUTED_MAX_CONCURRENT_ASKS, type GatewayConfig } from "./gatewayConfig.js";

type Kind = { help: string } & (
  | { type: "string" }
  | { type: "int"; min: number; max?: number }
  | { type: "number"; min: number; max?: number }
  | { type: "enum"; values: readonly string[] }
  | { type: "metrics" }
);

/** Every configurable key, its kind and range: the single source for file, env and flag parsing. */
export const CONFIG_KEYS: Readonly<Record<keyof GatewayConfig, Kind>> = {
  store: { type: "string", help: "chunk store directory (made by attr-rag ingest); embedded mode only" },
  model: { type: "string", help: "generator GGUF: a path or a model-cache name (attr-rag models list); with nats: the model id the workers serve" },
  embedder: { type: "string", help: "query embedder, must be the store's: use-lite | gguf:PATH" },
  reranker: { type: "string", help: "GGUF cross-encoder for re-ranking (path or cache name); with nats: the re-ranker id workers serve (their --reranker-id); unset = bi-encoder fallback" },
  k: { type: "int", min: 1, max: 10_000, help: "chunks retrieved per question" },
  retrievalMode: { type: "enum", values: ["dense", "bm25", "hybrid"], help: "dense | bm25 | hybrid" },
  metrics: { type: "metrics", help: "attribution metrics, comma-separated" },
  tau: { type: "number", min: 0, help: "elbow threshold: a metric's largest α drop must exceed it" },
  minVotes: { type: "int", min: 1, help: "metrics that must select a set to keep it" },
  epsilon: { type: "number", min: 0, help: "below this α everywhere, the context was ignored" },
  maxSets: { type: "int", min: 1, help: "keep at most this many sets" },
  maxGap: { type: "int", min: 0, max: 1000, help: "gap fill: add the chunks between kept chunks whose ordinals differ by at most this (2 = one chunk in between; 0 or 1 = off)" },
  maxTokens: { type: "int", min: 1, help: "max new tokens per answer" },
  strategy: { type: "enum", values: ["naive", "prefix-shared", "speculative"], help: "occlusion engine: naive | prefix-shared | speculative" },
  threads: { type: "int", min: 0, max: 1024, help: "engine CPU threads, 0 = all" },
  gpuLayers: { type: "int", min: -1, help: "layers offloaded to a GPU backend, -1 = all" },
  contextSize: { type: "int", min: 256, help: "generator KV cells, shared by its parallel sequences" },
  sequences: { type: "int", min: 2, max: 256, help: "parallel sequences of the generator (each gets contextSize/sequences cells)" },
  batchSize: { type: "int", min: 32, help: "tokens per llama_decode call" },
  sampling: { type: "enum", values: ["device", "host"], help: "output rows: device (greedy token, margin and log-probabilities computed in the decode graph, 24 bytes a row to the host) | host (whole logits rows)" },
  kvCache: { type: "enum", values: ["streams", "unified"], help: "generator KV cache: streams (one per sequence) | unified (one shared by all sequences)" },
  flashAttention: { type: "enum", values: ["off", "on", "auto"], help: "generator flash attention: off | on | auto" },
  maxQuestionChars: { type: "int", min: 1, max: MAX_QUERY_CHARS, help: "server limit: question length" },
  maxK: { type: "int", min: 1, max: 10_000, help: "server limit: retrieval k and baseline k" },
  maxMaxTokens: { type: "int", min: 1, help: "server limit: max_tokens of a request" },
  maxConcurrentAsks: { type: "int", min: 1, help: `asks (and attributes) running at once (default 1 embedded, ${DISTRIBUTED_MAX_CONCURRENT_ASKS} with nats)` },
  maxQueuedAsks: { type: "int", min: 0, help: "asks waiting for a slot; more get RESOURCE_EXHAUSTED" },
  searchThreads: { type: "int", min: 0, max: 64, help: "embedded: threads BM25 searches run on, off the event loop (0: on it)" },
  maxAttributeSets: { type: "int", min: 1, help: "server limit: context sets in one Attribute call" },
  maxAttributeChars: { type: "int", min: 1, help: "server limit: characters of an Attribute call's sets and initial answer" },
  stateDir: { type: "string", help: "embedded: directory of durable gateway state (batches.sqlite); default the store directory" },
  batchConcurrency: { type: "int", min: 0, max: 4096, help: "batch items this gateway runs at once, 0 = none (default: maxConcurrentAsks embedded; with nats two per worker slot)" },
  batchAckWait: { type: "int", min: 1, max: 3600, help: "with nats: seconds a gateway may hold a batch item without a sign of life before another gateway takes it over" },
  maxBatchItems: { type: "int", min: 1, max: 10_000_000, help: "server limit: items in one batch" },
  maxMessageBytes: { type: "int", min: 4 * 1024 * 1024, max: 2_000_000_000, help: "server limit: bytes of one request message (a CreateBatch holds all its items)" },
  authToken: { type: "string", help: "require `authorization: Bearer TOKEN` on AttrRagService and IndexService calls" },
  tlsCert: { type: "string", help: "PEM certificate chain: serve TLS (with tlsKey)" },
  tlsKey: { type: "string", help: "PEM private key for tlsCert" },
  nats: { type: "string", help: "distributed mode: NATS URL(s); retrieval, engine and selection go over NATS (no store or model file here)" },
  indexShards: { type: "int", min: 1, max: MAX_INDEX_SHARDS, help: "with nats: the index is split into this many shards (attr-rag index serve --shard i/S); unset = one index" },
  natsCreds: { type: "string", help: "NATS .creds file (JWT and nkey seed)" },
  natsUser: { type: "string", help: "NATS user (with natsPass)" },
  natsPass: { type: "string", help: "NATS password" },
  natsToken: { type: "string", help: "NATS token" },
  natsNkey: { type: "string", help: "file holding a NATS nkey seed" },
  natsTlsCa: { type: "string", help: "PEM CA certificate: connect to NATS with TLS" },
  webhookSecret: { type: "string", help: "batch webhooks: the Standard Webhooks signing secret (whsec_…); prefer the env variable or webhookSecretFile" },
  webhookSecretFile: { type: "string", help: "batch webhooks: a file holding the signing secret" },
  webhookAllowedHosts: { type: "string", help: "batch webhooks: comma-separated hosts a webhook may call although they are internal (loopback, private, link-local)" },
  webhookRetryFor: { type: "int", min: 1, max: 30 * 86_400, help: "batch webhooks: seconds a delivery is retried before it is given up" },
  webhookBackoffMs: { type: "int", min: 10, max: 600_000, help: "batch webhooks: first retry delay in ms, doubling up to ten minutes" },
  webhookAttemptTimeoutMs: { type: "int", min: 100, max: 600_000, help: "batch webhooks: ms one delivery attempt may take in all (connecting, the answer's headers and body); longer is a failed attempt" },
};

/** `maxTokens` → `ATTR_RAG_MAX_TOKENS`. */
export function envName(key: string): string {
  return "ATTR_RAG_" + key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
}

export interface ConfigSources {
  /** JSON file with any subset of the keys. */
  file?: string;
  /** Usually process.env; ATTR_RAG_<KEY> variables. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Command-line values (strings as typed, or already typed values); undefined entries are ignored. */
  overrides?: Readonly<Record<string, unknown>>;
}

/** Defaults ← file ← env ← overrides, every value checked; `store` and `model` must end up set. */
export function loadConfig(sources: ConfigSources): GatewayConfig {
  const merged: Record<string, unknown> = { ...DEFAULT_CONFIG };
  if (sources.file !== undefined) {
    for (const [key, value] of Object.entries(readConfigFile(sources.file))) merged[key] = parseValue(key, value, `config file ${sources.file}`);
  }
  for (const key of Object.keys(CONFIG_KEYS)) {
    const value = sources.env?.[envName(key)];
    if (value !== undefined && value !== "") merged[key] = parseValue(key, value, `environment variable ${envName(key)}`);
  }
  for (const [key, value] of Object.entries(sources.overrides ?? {})) {
    if (value !== undefined) merged[key] = parseValue(key, value, `option --${flagName(key)}`);
  }
  const distributed = merged.nats !== undefined;
  // Distributed, the JetStream queue is the queue: unless told otherwise, let as many Asks run as the workers take.
  if (distributed && merged.maxConcurrentAsks === DEFAULT_CONFIG.maxConcurrentAsks && !configured(sources, "maxConcurrentAsks")) merged.maxConcurrentAsks = DISTRIBUTED_MAX_CONCURRENT_ASKS;
  for (const key of distributed ? (["model"] as const) : (["store", "model"] as const)) {
    if (typeof merged[key] !== "string" || merged[key] === "") {
      throw new ConfigError(
        distributed
          ? `no model configured: pass --model with the model id the workers serve (their --model-id), set ${envName(key)}, or put "model" in the config file`
          : `no ${key} configured: pass --${key}, set ${envName(key)}, or put "${key}" in the config file`,
      );
    }
  }
  if (!distributed && merged.indexShards !== undefined) throw new ConfigError("indexShards is for distributed mode (with nats); embedded, the gateway opens one store: drop --index-shards");
  if (distributed) {
    if (merged.stateDir !== undefined) throw new ConfigError("stateDir is for embedded mode; with nats, batches live in JetStream: drop --state-dir");
    if (merged.store !== undefined) throw new ConfigError("store is for embedded mode; with nats the index service (attr-rag index serve --nats) holds the store: drop --store");
    if (!isSubjectToken(merged.model as string)) throw new ConfigError(`with nats, model is the model id the workers serve (e.g. stories260K), not a path: got "${String(merged.model)}"`);
    if (merged.reranker !== undefined && !isSubjectToken(merged.reranker as string)) {
      throw new ConfigError(
        `with nats, reranker is the re-ranker id the workers serve (attr-rag worker --reranker R.gguf --reranker-id ID), not a path: got "${String(merged.reranker)}"`,
      );
    }
  }
  const config = merged as unknown as GatewayConfig;
  if ((config.tlsCert === undefined) !== (config.tlsKey === undefined)) throw new ConfigError("TLS needs both tlsCert and tlsKey (PEM files)");
  if (config.embedder !== "use-lite" && !/^gguf:.+/.test(config.embedder)) throw new ConfigError(`embedder must be "use-lite" or "gguf:/path/to/model.gguf", got "${config.embedder}"`);
  // Defaults beyond the server's own limits would make every request that relies on them fail.
  if (config.k > config.maxK) throw new ConfigError(`k (${config.k}) is above maxK (${config.maxK}); raise maxK or lower k`);
  if (config.maxTokens > config.maxMaxTokens) throw new ConfigError(`maxTokens (${config.maxTokens}) is above maxMaxTokens (${config.maxMaxTokens}); raise maxMaxTokens or lower maxTokens`);
  return config;
}

/** Whether any source (file, environment, flags) set `key`. */
function configured(sources: ConfigSources, key: keyof GatewayConfig): boolean {
  if (sources.overrides?.[key] !== undefined) return true;
  const env = sources.env?.[envName(key)];
  if (env !== undefined && env !== "") return true;
  return sources.file !== undefined && Object.hasOwn(readConfigFile(sources.file), key);
}

function readConfigFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`, { cause: err });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config file ${path} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new ConfigError(`config file ${path} must hold a JSON object`);
  return parsed as Record<string, unknown>;
}

function parseValue(key: string, value: unknown, where: string): unknown {
  const kind = CONFIG_KEYS[key as keyof GatewayConfig];
  if (kind === undefined) throw new ConfigError(`${where}: unknown setting "${key}"; known: ${Object.keys(CONFIG_KEYS).join(", ")}`);
  const bad = (what: string) => new ConfigError(`${where}: ${key} must be ${what}, got ${JSON.stringify(value)}`);
  switch (kind.type) {
    case "string":
      if (typeof value !== "string" || value.trim() === "") throw bad("a non-empty string");
      return value;
    case "enum":
      if (typeof value !== "string" || !kind.values.includes(value)) throw bad(`one of ${kind.values.join(", ")}`);
      return value;
    case "metrics": {
      const list = Array.isArray(value) ? value : typeof value === "string" ? value.split(",").map((s) => s.trim()) : undefined;
      if (list === undefined || list.length === 0 || !list.every((m) => typeof m === "string" && isAttributionMetric(m))) {
        throw bad(`a non-empty list of ${ATTRIBUTION_METRICS.join(", ")}`);
      }
      return [...new Set(list)];
    }
    case "int":
    case "number": {
      const n = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : Number.NaN;
      const range = `${kind.min}${kind.max === undefined ? " or more" : `..${kind.max}`}`;
      if (!Number.isFinite(n) || (kind.type === "int" && !Number.isInteger(n)) || n < kind.min || (kind.max !== undefined && n > kind.max)) {
        throw bad(`${kind.type === "int" ? "an integer" : "a number"} in ${range}`);
      }
      return n;
    }
  }
}

/** `maxTokens` → `max-tokens` (the command-line flag). */
export function flagName(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
