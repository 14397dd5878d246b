import type Database from "better-sqlite3";

/**
 * batches.sqlite, migration i moves `PRAGMA user_version` from i to i + 1. Append only: state dirs in the
 * field already ran the released ones.
 */
export const BATCH_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE batches (
    id            TEXT PRIMARY KEY,
    label         TEXT NOT NULL,
    items_sha256  TEXT NOT NULL,
    total         INTEGER NOT NULL CHECK (total > 0),
    created_ms    INTEGER NOT NULL,
    cancelled     INTEGER NOT NULL DEFAULT 0 CHECK (cancelled IN (0, 1)),
    -- Results recorded so far: the next result's offset.
    finished      INTEGER NOT NULL DEFAULT 0,
    -- Set when the last item got its result; NULL while the batch runs.
    finished_ms   INTEGER
  ) STRICT;
  CREATE INDEX batches_by_age ON batches(created_ms DESC, id DESC);

  CREATE TABLE items (
    batch_id      TEXT NOT NULL REFERENCES batches(id),
    idx           INTEGER NOT NULL,
    item_id       TEXT NOT NULL,
    request       BLOB NOT NULL, -- AskRequest (protobuf)
    state         TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    attempts      INTEGER NOT NULL DEFAULT 0,
    -- A released item runs again no earlier than this (Unix ms).
    not_before_ms INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (batch_id, idx),
    UNIQUE (batch_id, item_id)
  ) STRICT, WITHOUT ROWID;
  CREATE INDEX items_by_state ON items(batch_id, state, idx);

  -- One result per item (the primary key): a second complete() of the same item changes nothing.
  CREATE TABLE results (
    batch_id      TEXT NOT NULL REFERENCES batches(id),
    idx           INTEGER NOT NULL,
    pos           INTEGER NOT NULL, -- offset among the batch's results, in the order they were recorded
    finished_ms   INTEGER NOT NULL,
    result        BLOB NOT NULL, -- BatchItemResult (protobuf), offset unset
    PRIMARY KEY (batch_id, idx),
    UNIQUE (batch_id, pos)
  ) STRICT;
  CREATE INDEX results_by_time ON results(batch_id, finished_ms);
  `,
  // The span CreateBatch ran in (W3C traceparent), which the items' traces link to; '' when not traced.
  `ALTER TABLE batches ADD COLUMN traceparent TEXT NOT NULL DEFAULT '';`,
  // Batch webhooks: the URL called when the batch ends, and the outbox of events to deliver (written with the
  // batch's end, in one transaction).
  `
  ALTER TABLE batches ADD COLUMN webhook_url TEXT NOT NULL DEFAULT '';
  CREATE TABLE webhook_events (
    id            TEXT PRIMARY KEY,
    batch_id      TEXT NOT NULL REFERENCES batches(id),
    url           TEXT NOT NULL,
    body          TEXT NOT NULL,
    created_ms    INTEGER NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    next_ms       INTEGER NOT NULL,
    delivered_ms  INTEGER,
    given_up_ms   INTEGER,
    last_error    TEXT NOT NULL DEFAULT ''
  ) STRICT;
  CREATE INDEX webhook_events_due ON webhook_events(next_ms) WHERE delivered_ms IS NULL AND given_up_ms IS NULL;
  `,
  // GetBatch and ListBatches show each batch's webhook delivery.
  `CREATE INDEX webhook_events_batch ON webhook_events(batch_id);`,
];

/** Brings the schema up to date, one transaction per migration (a crash leaves a whole version). */
export function migrateBatches(db: Database.Database, path: string): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > BATCH_MIGRATIONS.length) {
    throw new Error(`${path} has schema version ${current}, newer than this build understands (${BATCH_MIGRATIONS.length}); upgrade attr-rag`);
  }
  for (let version = current; version < BATCH_MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(BATCH_MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
