import { status } from "@grpc/grpc-js";
import type { JetStreamManager } from "@nats-io/jetstream";
import { INDEX_LOG_STREAM, indexLogSubject } from "@attr-rag/contracts";
import type { ShardSpec } from "@attr-rag/core";
import type { ChunkStore } from "../ChunkStore.js";
import { ServiceError } from "../service/ServiceError.js";

/** The log no longer holds the entries a store needs next (it was trimmed): a snapshot must fill the gap. */
export class LogTrimmedError extends ServiceError {
  constructor(
    readonly applied: number,
    readonly firstInLog: number,
    message: string,
  ) {
    super(status.FAILED_PRECONDITION, message);
  }
}

/** An entry this replica cannot read (written by a newer writer): it stops there rather than skip it. */
export class UnknownLogEntryError extends ServiceError {
  constructor(
    readonly sequence: number,
    message: string,
  ) {
    super(status.FAILED_PRECONDITION, message);
  }
}

/**
 * Checks, before a replica follows the log, that the log still holds every entry of its shard the store has
 * not applied, and records which log the store follows. Throws LogTrimmedError when it may not (a snapshot
 * must fill the gap), and whatever JetStream answered when the log cannot be read.
 */
export async function checkLogReaches(jsm: JetStreamManager, store: ChunkStore, spec: ShardSpec): Promise<void> {
  const replica = store.replica;
  const applied = replica.applied;
  const subject = indexLogSubject(spec.shard, spec.shards);
  const info = await jsm.streams.info(INDEX_LOG_STREAM, { subjects_filter: subject });
  // Sequences count within one stream: a store that followed another log (the stream was deleted and made
  // again) would skip this one's first entries as "applied", or trust a position it never saw here.
  const logId = `${INDEX_LOG_STREAM} created ${info.created}`;
  const heldLog = replica.log;
  if (heldLog === undefined) replica.log = logId;
  else if (heldLog !== logId) {
    throw new LogTrimmedError(
      applied,
      info.state.first_seq,
      `the store in ${store.path} followed another ingest log (${heldLog}, applied up to ${applied}), not this one (${logId}): the stream was made anew. Serve an empty store (--create in a new directory), which rebuilds from this log, or restore a snapshot taken from this log`,
    );
  }
  // Everything before the stream's first sequence is gone. The store knows its shard's subject held nothing
  // it lacks up to max(applied, checked); any sequence after that and before the first may have been one of
  // its entries, whether or not the subject holds anything now, and only a snapshot can fill that gap.
  const first = info.state.first_seq;
  const position = Math.max(applied, replica.checked);
  if (first > position + 1) {
    throw new LogTrimmedError(
      applied,
      first,
      `the ingest log starts at sequence ${first}, but the store in ${store.path} has applied up to ${applied}${position > applied ? ` (and saw nothing more of its shard up to ${position})` : ""}: the entries between were trimmed from the log. Start this replica from a snapshot of another replica of shard ${spec.shard}/${spec.shards} (\`attr-rag index snapshot --store THEIRS --out NEW\`, then serve NEW); it applies the log after the snapshot's last entry`,
    );
  }
}
