// What the checker compares the history with, taken after the recovery window: every batch the workload made as
// a gateway reports it (state, results, webhook), and, once the cluster has stopped, what each replica's store
// holds for the workload's documents. RSS is sampled from /proc while the run goes.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BatchState, WebhookDeliveryState } from "@attr-rag/contracts";
import type { BatchObserved, ReplicaObserved, RssSample } from "@attr-rag/core";
import { ChunkStore } from "@attr-rag/index";
import type { LocalCluster } from "@attr-rag/cluster";
import type { SoakClients } from "./soakClients.js";

const stateName = (s: number, names: Record<number, string>, prefix: string) => (names[s] ?? String(s)).replace(prefix, "").toLowerCase();

/** Each batch as the first gateway that answers reports it; "missing" when every one says NOT_FOUND. */
export async function observeBatches(batchIds: readonly string[], gateways: readonly SoakClients[], startEpochMs: number): Promise<BatchObserved[]> {
  const out: BatchObserved[] = [];
  for (const batchId of batchIds) {
    let seen: BatchObserved | undefined;
    for (const gw of gateways) {
      try {
        const b = await gw.getBatch(batchId, 15_000);
        const results = await gw.results(batchId, 60_000);
        seen = {
          batchId,
          state: stateName(b.state, BatchState as unknown as Record<number, string>, "BATCH_STATE_"),
          resultItemIds: results.map((r) => r.itemId),
          ...(b.webhook !== undefined ? { webhookState: stateName(b.webhook.state, WebhookDeliveryState as unknown as Record<number, string>, "WEBHOOK_DELIVERY_STATE_") } : {}),
          ...(b.finishedUnixMs !== undefined ? { endedAtMs: b.finishedUnixMs - startEpochMs } : {}),
        };
        break;
      } catch (err) {
        if ((err as { code?: number }).code === 5) seen ??= { batchId, state: "missing", resultItemIds: [] };
      }
    }
    out.push(seen ?? { batchId, state: "unreachable", resultItemIds: [] });
  }
  return out;
}

/** Every replica's store, read after the cluster stopped: the workload's documents and a digest of them all. */
export async function observeReplicas(root: string, shards: number, replicas: number, docIds: readonly string[]): Promise<ReplicaObserved[]> {
  const out: ReplicaObserved[] = [];
  for (let shard = 0; shard < shards; shard++) {
    for (let replica = 1; replica <= replicas; replica++) {
      const store = await ChunkStore.open(join(root, `shard-${shard}-of-${shards}`, `replica-${replica}`));
      try {
        const documents: Record<string, string> = {};
        const digest = createHash("sha256");
        const stats = store.stats();
        digest.update(`${stats.documents} ${stats.chunks}\n`);
        for (const id of [...docIds].sort()) {
          const d = store.getDocument(id);
          if (d === undefined) continue;
          documents[id] = d.title ?? "";
          digest.update(`${id} ${d.title ?? ""} ${d.contentHash} ${d.chunkCount}\n`);
          for (const c of store.getChunks(id, 0, d.chunkCount)) digest.update(`${c.id} ${c.text}\n`);
        }
        out.push({ shard, replica, documents, digest: digest.digest("hex") });
      } finally {
        await store.close();
      }
    }
  }
  return out;
}

/** RSS of every running process of the cluster and of nats-server, from /proc (nothing where there is no /proc). */
export function sampleRss(cluster: LocalCluster, atMs: number): RssSample[] {
  const pids: [string, number | undefined][] = [...cluster.processes.filter((p) => p.running).map((p) => [p.name, p.child.pid] as [string, number | undefined]), ["nats", cluster.nats.pid()]];
  const out: RssSample[] = [];
  for (const [name, pid] of pids) {
    if (pid === undefined) continue;
    try {
      const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
      if (kb !== undefined) out.push({ process: name, atMs, bytes: Number(kb) * 1024 });
    } catch {
      // exited between the list and the read
    }
  }
  return out;
}
