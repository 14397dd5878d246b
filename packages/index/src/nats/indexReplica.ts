import { IndexLogApplied, IndexReplicaStatus, INDEX_REPLICAS_STATUS_SUBJECT, indexAppliedSubject, indexReplaySubject } from "@attr-rag/contracts";
import type { ShardSpec } from "@attr-rag/core";
import type { NatsConnection, Service } from "@attr-rag/nats";
import type { ServiceContext } from "../service/context.js";
import { IndexLogFollower } from "./indexLogFollower.js";
import { serveIndexShardOverNats } from "./indexOverNats.js";
import { DEFAULT_LAG_LIMITS, shouldServe, validateLagLimits, type ReplicaLagLimits } from "./replicaLag.js";
import { ShardedNatsIndex } from "./shardedNatsIndex.js";

/** How often catching up reports its progress. */
const PROGRESS_MS = 2_000;

export interface IndexReplicaOptions {
  /** Progress, leaving and joining the queue group, failures: one line each. */
  readonly log?: (line: string) => void;
  /** The most this replica may lag behind its shard's log and still answer searches. */
  readonly maxLag?: ReplicaLagLimits;
  /** How often the lag is measured (ms). */
  readonly lookMs?: number;
}

export interface IndexReplica {
  readonly follower: IndexLogFollower;
  /** Writes (ingest, delete) as the gateway makes them: into the ingest log, for the document's shard. */
  readonly writes: ShardedNatsIndex;
  /** Whether it is in the shard's queue group now. */
  readonly serving: boolean;
  /** What it says of itself on INDEX_REPLICAS_STATUS_SUBJECT (GetCluster). */
  status(): IndexReplicaStatus;
  /** Stops answering, then stops applying the log (the store stays open: the caller closes it). */
  stop(): Promise<void>;
}

/**
 * One replica of shard `spec` of a replicated index: applies the shard's ingest log to the store, and once it
 * has applied every entry the log held when it started, answers the shard's searches on NATS (in the shard's
 * queue group, beside the other replicas). A replica that falls more than `maxLag` behind later (its embedder
 * is down, it stopped at an entry it cannot read, it cannot keep up) leaves the queue group until it has caught
 * up again: its results would miss documents the others have, or return ones they deleted.
 */
export async function startIndexReplica(nc: NatsConnection, ctx: ServiceContext, spec: ShardSpec, options: IndexReplicaOptions | ((line: string) => void) = {}): Promise<IndexReplica> {
  const o: IndexReplicaOptions = typeof options === "function" ? { log: options } : options;
  const log = o.log ?? (() => {});
  const limits = validateLagLimits(o.maxLag ?? DEFAULT_LAG_LIMITS);
  const shardName = `shard ${spec.shard}/${spec.shards}`;
  const writes = new ShardedNatsIndex(nc, spec.shards);
  let service: Service | undefined;
  let serving = false;
  let stopped = false;
  let changing: Promise<void> = Promise.resolve();
  /** Looks before the first join change nothing: start-up decides that. */
  let ready = false;

  const status = (): IndexReplicaStatus => ({
    replica: follower.replicaId,
    shard: spec.shard,
    shards: spec.shards,
    applied: follower.applied,
    lagEntries: follower.lag.entries,
    lagSeconds: follower.lag.seconds,
    serving,
    reason: follower.stoppedBecause ?? (serving ? "" : `behind the ingest log: ${describeLag(follower.lag)} (the limit is ${limits.entries} entries or ${limits.seconds} s); answering again once caught up`),
  });

  // Joining and leaving one at a time, in the order the looks decided them.
  const reconsider = () => {
    changing = changing.then(async () => {
      if (stopped) return;
      const want = shouldServe(serving, follower.lag, limits, follower.stoppedBecause !== undefined);
      if (want === serving) return;
      if (want) {
        service = await serveIndexShardOverNats(nc, ctx, spec, writes);
        serving = true;
        log(`caught up with the ingest log of ${shardName} at sequence ${follower.applied}: answering its searches again`);
      } else {
        serving = false;
        await service?.stop().catch(() => {});
        service = undefined;
        log(`left the queue group of ${shardName}: ${status().reason}`);
      }
    }).catch((err: unknown) => log(`${shardName}: cannot change whether this replica answers searches (${(err as Error).message})`));
  };

  const follower = await IndexLogFollower.start(nc, ctx, spec, { log, ...(o.lookMs !== undefined ? { lookMs: o.lookMs } : {}), onLook: () => ready && reconsider() });
  const startedAt = follower.applied;
  const started = performance.now();
  const progress = setInterval(() => log(`catching up with the ingest log of ${shardName}: applied up to sequence ${follower.applied} (from ${startedAt})`), PROGRESS_MS);
  try {
    await follower.caughtUp();
  } catch (err) {
    await follower.stop();
    throw err;
  } finally {
    clearInterval(progress);
  }
  if (follower.applied > startedAt) {
    const seconds = (performance.now() - started) / 1000;
    log(`caught up with the ingest log of ${shardName} at sequence ${follower.applied} (applied ${follower.appliedEntries} entries in ${seconds.toFixed(2)} s, ${(follower.appliedEntries / seconds).toFixed(1)} entries/s)`);
  }
  const answers = [
    // GetCluster asks every replica, serving or not.
    nc.subscribe(INDEX_REPLICAS_STATUS_SUBJECT, { callback: (_err, m) => void m.respond(IndexReplicaStatus.encode(status()).finish()) }),
    // A writer whose retry was a duplicate missed this replica's note for the entry: it is said again.
    nc.subscribe(indexReplaySubject(spec.shard, spec.shards, "*"), {
      callback: (_err, m) => {
        const id = m.subject.split(".").at(-2)!;
        const note = follower.notes.get(id);
        if (note !== undefined) nc.publish(indexAppliedSubject(spec.shard, spec.shards, id), IndexLogApplied.encode(note).finish());
      },
    }),
  ];
  try {
    service = await serveIndexShardOverNats(nc, ctx, spec, writes);
    serving = true;
  } catch (err) {
    for (const s of answers) s.unsubscribe();
    await follower.stop();
    throw err;
  }
  ready = true;
  return {
    follower,
    writes,
    get serving() {
      return serving;
    },
    status,
    stop: async () => {
      stopped = true;
      await changing;
      for (const s of answers) s.unsubscribe();
      await service?.stop().catch(() => {});
      serving = false;
      await follower.stop();
    },
  };
}

function describeLag(lag: { entries: number; seconds: number }): string {
  return `${lag.entries} entr${lag.entries === 1 ? "y" : "ies"} not applied, the oldest ${lag.seconds.toFixed(1)} s old`;
}
