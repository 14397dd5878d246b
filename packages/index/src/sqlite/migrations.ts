import { StoreError } from "../errors.js";
import type { Db } from "./openDatabase.js";

/**
 * Schema migrations, in order: migration i moves `PRAGMA user_version` from i to i + 1. Append only;
 * never edit a released one (stores in the field already ran it).
 */
export const MIGRATIONS: readonly string[] = [
  // v1: documents, chunks, FTS5 over chunk text, meta, vector bookkeeping.
  `
  CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT;

  CREATE TABLE documents (
    id           TEXT PRIMARY KEY,
    title        TEXT,
    source       TEXT,
    license      TEXT,
    content_hash TEXT NOT NULL,
    text_length  INTEGER NOT NULL,
    chunk_count  INTEGER NOT NULL,
    ingested_at  TEXT NOT NULL
  ) STRICT;
  CREATE INDEX documents_by_source ON documents(source);

  -- AUTOINCREMENT: rowids are the vector keys, and a reused rowid could pick up the stale vector of a
  -- deleted chunk that a crash left in the vector file. With AUTOINCREMENT a key is never reused.
  CREATE TABLE chunks (
    rowid   INTEGER PRIMARY KEY AUTOINCREMENT,
    id      TEXT NOT NULL UNIQUE,
    doc_id  TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL,
    start   INTEGER NOT NULL,
    "end"   INTEGER NOT NULL,
    text    TEXT NOT NULL,
    UNIQUE (doc_id, ordinal)
  ) STRICT;

  -- External-content FTS5: the text is stored once (in chunks); triggers keep the index in step inside
  -- the same transaction as the chunk rows, so BM25 never sees a half-written document.
  CREATE VIRTUAL TABLE chunks_fts USING fts5(
    text,
    content = 'chunks',
    content_rowid = 'rowid',
    tokenize = 'porter unicode61'
  );

  -- Which chunk rowids have vectors, and where: 'pending' = committed, vector not yet in the saved file
  -- (maybe only in memory); 'saved' = in the saved vector file; 'deleted' = chunk gone, its vector must be
  -- removed from the file. No foreign key: the row has to outlive its chunk until the file is saved.
  CREATE TABLE vector_state (
    key   INTEGER PRIMARY KEY,
    state TEXT NOT NULL CHECK (state IN ('pending', 'saved', 'deleted'))
  ) STRICT;
  CREATE INDEX vector_state_by_state ON vector_state(state);

  CREATE TRIGGER chunks_after_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text) VALUES (new.rowid, new.text);
    INSERT INTO vector_state(key, state) VALUES (new.rowid, 'pending');
  END;

  CREATE TRIGGER chunks_after_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    UPDATE vector_state SET state = 'deleted' WHERE key = old.rowid;
  END;

  -- Chunks are immutable: a changed document is deleted and re-inserted, which the triggers above cover.
  CREATE TRIGGER chunks_no_update BEFORE UPDATE ON chunks BEGIN
    SELECT RAISE(ABORT, 'chunks are immutable; replace the whole document instead');
  END;
  `,
  // v2: what exact BM25 top-k reads instead of counting postings (FTS5's bm25() counts every posting of every
  // query word on every query, which made BM25 linear in the corpus): each FTS token's document frequency
  // (filled here from FTS5's own vocabulary) and each chunk's token counts (filled by the store at open for
  // chunks from before v2). DocumentRows keeps both in the same transactions as chunks_fts.
  `
  CREATE TABLE chunks_fts_terms (
    id   INTEGER PRIMARY KEY,
    term TEXT NOT NULL UNIQUE,
    df   INTEGER NOT NULL
  ) STRICT;
  CREATE VIRTUAL TABLE temp.chunks_fts_vocab_v2 USING fts5vocab(main, chunks_fts, 'row');
  INSERT INTO chunks_fts_terms (term, df) SELECT term, doc FROM temp.chunks_fts_vocab_v2;
  DROP TABLE temp.chunks_fts_vocab_v2;

  -- Per chunk: (term id, count) pairs, ids ascending, as varints (id as the gap from the previous one).
  CREATE TABLE chunk_term_counts (
    chunk  INTEGER PRIMARY KEY,
    counts BLOB NOT NULL
  ) STRICT;
  CREATE TRIGGER chunks_after_delete_term_counts AFTER DELETE ON chunks BEGIN
    DELETE FROM chunk_term_counts WHERE chunk = old.rowid;
  END;
  `,
  // v3: an inverted index of the same tokens (TermPostings), written in batches of chunks after they commit:
  // per term and batch one row of (chunk, count, chunk's token count). Derived from chunk_term_counts and
  // chunks_fts_docsize; `upto` is the last chunk a batch covered (0: none yet, filled in at open).
  `
  CREATE TABLE term_postings (
    term       INTEGER NOT NULL,
    last_chunk INTEGER NOT NULL,
    postings   BLOB NOT NULL,
    PRIMARY KEY (term, last_chunk)
  ) STRICT, WITHOUT ROWID;
  CREATE TABLE term_postings_upto (
    id   INTEGER PRIMARY KEY CHECK (id = 1),
    upto INTEGER NOT NULL
  ) STRICT;
  INSERT INTO term_postings_upto (id, upto) VALUES (1, 0);
  -- Chunks deleted (their postings stay where they are written; readers skip these), in the order deleted.
  CREATE TABLE term_postings_dead (
    seq   INTEGER PRIMARY KEY,
    chunk INTEGER NOT NULL
  ) STRICT;
  CREATE TRIGGER chunks_after_delete_postings AFTER DELETE ON chunks BEGIN
    INSERT INTO term_postings_dead (chunk) VALUES (old.rowid);
  END;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the schema to SCHEMA_VERSION, one transaction per migration (a crash leaves a whole version). */
export function migrate(db: Db, storeDir: string): number {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new StoreError(
      `store ${storeDir} has schema version ${current}, newer than this build understands (${SCHEMA_VERSION}); upgrade @attr-rag/index`,
    );
  }
  for (let version = current; version < SCHEMA_VERSION; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
  return SCHEMA_VERSION;
}
