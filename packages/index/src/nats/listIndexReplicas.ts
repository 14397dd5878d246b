import { IndexReplicaStatus, INDEX_REPLICAS_STATUS_SUBJECT } from "@attr-rag/contracts";
import { NoRespondersError, type NatsConnection } from "@attr-rag/nats";

/**
 * Every replica of a replicated index that answers within `maxWaitMs`, serving or not, by shard then id; none
 * when no replica runs (an unsharded index, or none started yet).
 */
export async function listIndexReplicas(nc: NatsConnection, maxWaitMs = 500): Promise<IndexReplicaStatus[]> {
  const all: IndexReplicaStatus[] = [];
  try {
    for await (const m of await nc.requestMany(INDEX_REPLICAS_STATUS_SUBJECT, undefined, { maxWait: maxWaitMs })) all.push(IndexReplicaStatus.decode(m.data));
  } catch (err) {
    if (!(err instanceof NoRespondersError)) throw err;
  }
  return all.sort((a, b) => a.shards - b.shards || a.shard - b.shard || a.replica.localeCompare(b.replica));
}
