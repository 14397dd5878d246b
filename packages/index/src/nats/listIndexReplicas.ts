import { IndexReplicaStatus, INDEX_REPLICAS_STATUS_SUBJECT } from "@attr-rag/contracts";
import type { NatsConnection } from "@attr-rag/nats";

/** Every replica of a replicated index that answers within `maxWaitMs`, serving or not, by shard then id. */
export async function listIndexReplicas(nc: NatsConnection, maxWaitMs = 500): Promise<IndexReplicaStatus[]> {
  const all: IndexReplicaStatus[] = [];
  for await (const m of await nc.requestMany(INDEX_REPLICAS_STATUS_SUBJECT, undefined, { maxWait: maxWaitMs })) {
    try {
      all.push(IndexReplicaStatus.decode(m.data));
    } catch {
      // Not a replica's answer (a "no responders" status): nothing to list.
    }
  }
  return all.sort((a, b) => a.shards - b.shards || a.shard - b.shard || a.replica.localeCompare(b.replica));
}
