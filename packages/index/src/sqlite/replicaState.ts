import { randomUUID } from "node:crypto";
import { shardOf } from "@attr-rag/core";
import { StoreConfigMismatchError } from "../errors.js";
import type { Db } from "./openDatabase.js";
import { writeMeta } from "./meta.js";

const REPLICA_ID = "replica_id";
const APPLIED = "ingest_log_applied";
const CHECKED = "ingest_log_checked";
const SHARD = "shard";
const LOG = "ingest_log";

/**
 * A store as one replica of a replicated index (meta table): its id, the shard it holds, and the last ingest
 * log entry it applied, so a restart resumes after it. The follower writes the sequence in the same
 * transaction as the entry's data (see ChunkStore's `appliedSequence`), so a search reading both in one
 * transaction sees data and version that belong together, and a crash never leaves them apart.
 */
export class ReplicaState {
  readonly #db: Db;
  readonly #get: ReturnType<Db["prepare"]>;

  constructor(db: Db) {
    this.#db = db;
    this.#get = db.prepare("SELECT value FROM meta WHERE key = ?").pluck();
  }

  #read(key: string): string | undefined {
    return this.#get.get(key) as string | undefined;
  }

  /** This store's replica id, made on first use and kept. */
  get id(): string {
    const id = this.#read(REPLICA_ID);
    if (id !== undefined) return id;
    const made = randomUUID();
    writeMeta(this.#db, { [REPLICA_ID]: made });
    return made;
  }

  /** The last log sequence applied (0: none). */
  get applied(): number {
    return Number(this.#read(APPLIED) ?? 0);
  }

  /** Records `sequence` as applied; inside a caller's transaction it commits with the caller's writes. */
  set applied(sequence: number) {
    writeMeta(this.#db, { [APPLIED]: String(sequence) });
  }

  /**
   * A log sequence up to which the shard's subject is known to hold nothing this store has not applied (the
   * follower looked and found no later entry of its shard): with `applied` it says how far back the log must
   * reach for this store, so a trim of other shards' entries alone does not make it start from a snapshot.
   */
  get checked(): number {
    return Number(this.#read(CHECKED) ?? 0);
  }

  set checked(sequence: number) {
    writeMeta(this.#db, { [CHECKED]: String(sequence) });
  }

  /** Which ingest log the applied sequence counts in (the stream's creation time; undefined before any). */
  get log(): string | undefined {
    return this.#read(LOG);
  }

  set log(id: string) {
    writeMeta(this.#db, { [LOG]: id });
  }

  /** The shard this store holds ("i/S"), when it was built or served as one. */
  get shard(): string | undefined {
    return this.#read(SHARD);
  }

  /**
   * Records that this store holds shard `shard` of `shards`, or checks that it already does: a store served as
   * another shard would answer for documents the gateway looks for elsewhere. A store not yet claimed must hold
   * only that shard's documents (shardOf), whatever made it.
   */
  claimShard(shard: number, shards: number, dir: string): void {
    const want = `${shard}/${shards}`;
    const held = this.shard;
    if (held === undefined) {
      const stray = this.#db.prepare("SELECT id FROM documents").pluck().iterate() as IterableIterator<string>;
      let count = 0;
      let first: string | undefined;
      for (const id of stray) {
        if (shardOf(id, shards) === shard) continue;
        first ??= id;
        count++;
      }
      if (first !== undefined) {
        throw new StoreConfigMismatchError(
          `the store in ${dir} holds ${count} document(s) of other shards than ${want} (${JSON.stringify(first)} belongs to shard ${shardOf(first, shards)}/${shards}); build each shard's store with \`attr-rag ingest --shard i/S\`, or serve an empty store (--create in a new directory), which fills from the ingest log`,
        );
      }
      writeMeta(this.#db, { [SHARD]: want });
    } else if (held !== want) {
      throw new StoreConfigMismatchError(`the store in ${dir} holds shard ${held}, not ${want}; serve it as --shard ${held}, or give shard ${want} its own store`);
    }
  }

  /**
   * Refuses to use a store that holds one shard as a whole index: `what` (plain ingest, or serving it
   * unsharded) would mix in or answer for other shards' documents. `remedy` says what to do instead.
   */
  assertUnsharded(what: string, dir: string, remedy: string): void {
    const held = this.shard;
    if (held !== undefined) throw new StoreConfigMismatchError(`the store in ${dir} holds shard ${held} of a sharded index; ${what} would treat it as the whole index. ${remedy.replaceAll("{shard}", held)}`);
  }

  /** Refuses a direct write to a store that follows an ingest log: it changes only through the log. */
  assertNotFollowing(what: string, dir: string): void {
    if (this.log !== undefined || this.applied > 0) {
      throw new StoreConfigMismatchError(
        `the store in ${dir} is a replica of a replicated index (it applied the ingest log up to sequence ${this.applied}); ${what} would change it outside the log, and its replicas would disagree. Write through the gateway (IngestDocuments, DeleteDocument) or the replica's own port, which both append to the log`,
      );
    }
  }
}
