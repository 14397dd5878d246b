// The distributed tests' cluster: LocalCluster (what deploy/local/cluster runs) on the shipped model, with
// known per-role passwords so a test can log in as any role.
import { LocalCluster, type Role } from "@attr-rag/cluster";
import { TEST_MODEL } from "./runCli.js";

export const PASSWORDS: Readonly<Record<Role, string>> = { gateway: "gw-secret", worker: "wk-secret", selector: "sel-secret", index: "ix-secret" };

export interface ClusterOptions {
  readonly store: string;
  readonly workers: number;
  /** Engine settings of every worker (and of the embedded runs compared with them). */
  readonly engine: readonly string[];
  readonly ackWaitSeconds?: number;
  readonly maxDeliver?: number;
  /** Gateway defaults (k, max tokens, …). */
  readonly gatewayArgs?: readonly string[];
  /** Gateways (default 1). */
  readonly gateways?: number;
  /** A GGUF cross-encoder served by `workers` re-rank-only workers under `id`; the gateways re-rank with it. */
  readonly reranker?: { readonly path: string; readonly id: string; readonly workers: number };
  /** The store's GGUF embedder: the index embeds with it, `workers` embed-only workers serve its embed jobs. */
  readonly embedder?: { readonly path: string; readonly workers: number };
  /** A replicated index: shards × replicas processes over empty stores under `store`, embedding with the GGUF at embedderPath. */
  readonly index?: { readonly shards: number; readonly replicas: number; readonly embedderPath: string };
  /** Every process serves /metrics on a free port (LocalCluster.metricsTargets). */
  readonly metrics?: boolean;
  /** Extra environment of every process. */
  readonly env?: Readonly<Record<string, string>>;
}

export function startCluster(o: ClusterOptions): Promise<LocalCluster> {
  return LocalCluster.start({
    store: o.store,
    workers: o.workers,
    modelPath: TEST_MODEL,
    modelId: "stories260K",
    workerArgs: o.engine,
    ackWaitSeconds: o.ackWaitSeconds ?? 2,
    maxDeliver: o.maxDeliver ?? 3,
    gatewayArgs: o.gatewayArgs ?? [],
    gateways: o.gateways ?? 1,
    ...(o.reranker !== undefined ? { rerankerPath: o.reranker.path, rerankerId: o.reranker.id, rerankerWorkers: o.reranker.workers } : {}),
    ...(o.embedder !== undefined ? { embedderPath: o.embedder.path, embedderWorkers: o.embedder.workers } : {}),
    ...(o.index !== undefined ? { indexShards: o.index.shards, indexReplicas: o.index.replicas, embedderPath: o.index.embedderPath, embedderWorkers: 0 } : {}),
    passwords: PASSWORDS,
    ...(o.metrics ? { metrics: true } : {}),
    ...(o.env !== undefined ? { env: o.env } : {}),
  });
}
