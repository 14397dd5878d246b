import type { ShardSpec } from "@attr-rag/core";
import type { NatsConnection, Service } from "@attr-rag/nats";
import type { ServiceContext } from "../service/context.js";
import { IndexLogFollower } from "./indexLogFollower.js";
import { serveIndexShardOverNats } from "./indexOverNats.js";
import { ShardedNatsIndex } from "./shardedNatsIndex.js";

/** How often catching up reports its progress. */
const PROGRESS_MS = 2_000;

export interface IndexReplica {
  readonly follower: IndexLogFollower;
  readonly service: Service;
  /** Writes (ingest, delete) as the gateway makes them: into the ingest log, for the document's shard. */
  readonly writes: ShardedNatsIndex;
  /** Stops answering, then stops applying the log (the store stays open: the caller closes it). */
  stop(): Promise<void>;
}

/**
 * One replica of shard `spec` of a replicated index: applies the shard's ingest log to the store, and once it
 * has applied every entry the log held when it started, answers the shard's searches on NATS (in the shard's
 * queue group, beside the other replicas). A replica that is behind never answers: its results would miss
 * documents the others have.
 */
export async function startIndexReplica(nc: NatsConnection, ctx: ServiceContext, spec: ShardSpec, log: (line: string) => void = () => {}): Promise<IndexReplica> {
  const follower = await IndexLogFollower.start(nc, ctx, spec, { log });
  const startedAt = follower.applied;
  const progress = setInterval(() => log(`catching up with the ingest log of shard ${spec.shard}/${spec.shards}: applied up to sequence ${follower.applied} (from ${startedAt})`), PROGRESS_MS);
  try {
    await follower.caughtUp();
  } catch (err) {
    await follower.stop();
    throw err;
  } finally {
    clearInterval(progress);
  }
  if (follower.applied > startedAt) log(`caught up with the ingest log of shard ${spec.shard}/${spec.shards} at sequence ${follower.applied}`);
  const writes = new ShardedNatsIndex(nc, spec.shards);
  let service: Service;
  try {
    service = await serveIndexShardOverNats(nc, ctx, spec, writes);
  } catch (err) {
    await follower.stop();
    throw err;
  }
  return {
    follower,
    service,
    writes,
    stop: async () => {
      await service.stop().catch(() => {});
      await follower.stop();
    },
  };
}
