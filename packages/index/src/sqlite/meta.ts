import type { Db } from "./openDatabase.js";

/** The `meta` key/value table: store configuration and the vector file's checksums. */
export function readMeta(db: Db): Map<string, string> {
  const rows = db.prepare("SELECT key, value FROM meta").all() as { key: string; value: string }[];
  return new Map(rows.map((r) => [r.key, r.value]));
}

/** Writes all entries in one transaction (or in the caller's, when called inside one). */
export function writeMeta(db: Db, entries: Readonly<Record<string, string>>): void {
  const put = db.prepare("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  db.transaction(() => {
    for (const [key, value] of Object.entries(entries)) put.run(key, value);
  })();
}

export function deleteMeta(db: Db, key: string): void {
  db.prepare("DELETE FROM meta WHERE key = ?").run(key);
}
