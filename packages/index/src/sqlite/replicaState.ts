import { randomUUID } from "node:crypto";
import { StoreConfigMismatchError } from "../errors.js";
import type { Db } from "./openDatabase.js";
import { readMeta, writeMeta } from "./meta.js";

const REPLICA_ID = "replica_id";
const APPLIED = "ingest_log_applied";
const SHARD = "shard";
const LOG = "ingest_log";

/**
 * A store as one replica of a replicated index (meta table): its id, the shard it holds, and the last ingest
 * log entry it applied, so a restart resumes after it. The sequence is written after the entry's own
 * transaction: a crash between them re-applies that entry, which changes nothing (an upsert of unchanged
 * text is UNCHANGED, a delete of a deleted document finds nothing).
 */
export class ReplicaState {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /** This store's replica id, made on first use and kept. */
  get id(): string {
    const id = readMeta(this.#db).get(REPLICA_ID);
    if (id !== undefined) return id;
    const made = randomUUID();
    writeMeta(this.#db, { [REPLICA_ID]: made });
    return made;
  }

  /** The last log sequence applied (0: none). */
  get applied(): number {
    return Number(readMeta(this.#db).get(APPLIED) ?? 0);
  }

  set applied(sequence: number) {
    writeMeta(this.#db, { [APPLIED]: String(sequence) });
  }

  /** Which ingest log the applied sequence counts in (the stream's creation time; undefined before any). */
  get log(): string | undefined {
    return readMeta(this.#db).get(LOG);
  }

  set log(id: string) {
    writeMeta(this.#db, { [LOG]: id });
  }

  /**
   * Records that this store holds shard `shard` of `shards`, or checks that it already does: a store served as
   * another shard would answer for documents the gateway looks for elsewhere.
   */
  claimShard(shard: number, shards: number, dir: string): void {
    const want = `${shard}/${shards}`;
    const held = readMeta(this.#db).get(SHARD);
    if (held === undefined) writeMeta(this.#db, { [SHARD]: want });
    else if (held !== want) {
      throw new StoreConfigMismatchError(`the store in ${dir} holds shard ${held}, not ${want}; serve it as --shard ${held}, or give shard ${want} its own store`);
    }
  }
}
