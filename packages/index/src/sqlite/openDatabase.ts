import Database from "better-sqlite3";
import { StoreError } from "../errors.js";

export type Db = Database.Database;

/**
 * Opens store.sqlite with the settings durability depends on:
 * - WAL: readers never block the writer, and a commit is one append to the log;
 * - synchronous=FULL: the log is fsynced at every commit, so a document whose upsert resolved survives
 *   kill -9 and power loss (NORMAL would only survive a process crash);
 * - foreign_keys: deleting a document cascades to its chunks (and, through triggers, to FTS and vectors).
 */
export function openDatabase(path: string, storeDir: string): Db {
  try {
    return openDurableDatabase(path);
  } catch (err) {
    throw new StoreError(
      `cannot open ${path} as the SQLite database of store ${storeDir}: ${(err as Error).message}; ` +
        `is the directory a store made by this tool, and readable and writable?`,
      { cause: err },
    );
  }
}

/**
 * A SQLite database with the settings above (WAL, synchronous=FULL, foreign keys, a busy timeout): what every
 * durable file of ours needs (the chunk store, the gateway's batches). Closed again if the file is not SQLite.
 */
export function openDurableDatabase(path: string): Db {
  const db = new Database(path);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.pragma("foreign_keys = ON");
    db.pragma("busy_timeout = 5000");
    // Reading the schema is the first access to the file: a non-SQLite file fails here.
    db.prepare("SELECT count(*) FROM sqlite_schema").get();
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
