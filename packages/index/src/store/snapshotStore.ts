import { copyFileSync, existsSync, mkdirSync, readdirSync } from "node:fs";
import Database from "better-sqlite3";
import { StoreError, StoreNotFoundError } from "../errors.js";
import { readMeta } from "../sqlite/meta.js";
import { storeFiles } from "./storeFiles.js";

export interface StoreSnapshot {
  /** The last ingest log entry the snapshot holds (0 for a store that is no replica). */
  readonly applied: number;
  /** The shard it holds ("i/S"), when it is a replica. */
  readonly shard?: string;
  readonly documents: number;
}

/**
 * A copy of a store in a new directory, taken while another process may have it open (SQLite's online
 * backup: one consistent state of the database; the vector file is whole, as saves replace it by rename, and a
 * copy older than the database is repaired on open, re-embedding the chunks it lacks). The copy drops the
 * replica id: it is a new replica, which resumes the ingest log after the snapshot's last applied entry.
 */
export async function snapshotStore(source: string, destination: string): Promise<StoreSnapshot> {
  const from = storeFiles(source);
  const to = storeFiles(destination);
  if (!existsSync(from.sqlite)) throw new StoreNotFoundError(`no store at ${source} (no ${from.sqlite})`);
  if (existsSync(destination) && readdirSync(destination).length > 0) throw new StoreError(`${destination} is not empty; a snapshot goes into a new directory`);
  mkdirSync(destination, { recursive: true });
  const db = new Database(from.sqlite, { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    // The vector file first: one older than the database is repaired on open, one newer would not match it.
    if (existsSync(from.vectors)) copyFileSync(from.vectors, to.vectors);
    await db.backup(to.sqlite);
  } finally {
    db.close();
  }
  const copy = new Database(to.sqlite);
  try {
    copy.prepare("DELETE FROM meta WHERE key = 'replica_id'").run();
    const meta = readMeta(copy);
    const documents = (copy.prepare("SELECT count(*) AS n FROM documents").get() as { n: number }).n;
    const shard = meta.get("shard");
    return { applied: Number(meta.get("ingest_log_applied") ?? 0), documents, ...(shard !== undefined ? { shard } : {}) };
  } finally {
    copy.close();
  }
}
