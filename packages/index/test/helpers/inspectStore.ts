import { join } from "node:path";
import Database from "better-sqlite3";
import { decodeTermCounts } from "../../src/sqlite/chunkTermCounts.js";
import { forEachPosting } from "../../src/sqlite/termPostings.js";
import { readVarint } from "../../src/search/bm25Stats.js";

/**
 * Reads a store's SQLite file directly (the store should be closed) and lists every broken invariant:
 * a "half-ingested" document is one whose chunk_count differs from its chunk rows or whose ordinals have
 * holes; FTS and vector bookkeeping must cover exactly the chunk rows. Empty list = consistent.
 */
export function storeViolations(storeDir: string): string[] {
  const db = new Database(join(storeDir, "store.sqlite"));
  try {
    const out: string[] = [];
    const halfDocs = db
      .prepare(
        `SELECT d.id, d.chunk_count, count(c.rowid) AS n, coalesce(max(c.ordinal), -1) AS maxOrdinal
         FROM documents d LEFT JOIN chunks c ON c.doc_id = d.id GROUP BY d.id
         HAVING n <> d.chunk_count OR maxOrdinal <> d.chunk_count - 1 OR n = 0`,
      )
      .all() as { id: string; chunk_count: number; n: number }[];
    for (const d of halfDocs) out.push(`document ${d.id} records ${d.chunk_count} chunks but has ${d.n} chunk rows (or holes)`);
    const orphans = db.prepare("SELECT count(*) AS n FROM chunks WHERE doc_id NOT IN (SELECT id FROM documents)").get() as { n: number };
    if (orphans.n > 0) out.push(`${orphans.n} chunks without a document`);
    const noState = db.prepare("SELECT count(*) AS n FROM chunks WHERE rowid NOT IN (SELECT key FROM vector_state WHERE state <> 'deleted')").get() as { n: number };
    if (noState.n > 0) out.push(`${noState.n} chunks without a live vector_state row`);
    const ghostState = db.prepare("SELECT count(*) AS n FROM vector_state WHERE state <> 'deleted' AND key NOT IN (SELECT rowid FROM chunks)").get() as { n: number };
    if (ghostState.n > 0) out.push(`${ghostState.n} live vector_state rows without a chunk`);
    // The document frequencies BM25 top-k reads must be FTS5's own, term for term.
    db.exec("CREATE VIRTUAL TABLE temp.vocab_check USING fts5vocab(main, chunks_fts, 'row')");
    const dfDrift = db
      .prepare(
        `SELECT count(*) AS n FROM (
           SELECT term, doc AS df FROM temp.vocab_check EXCEPT SELECT term, df FROM chunks_fts_terms WHERE df > 0
           UNION ALL
           SELECT term, df FROM chunks_fts_terms WHERE df > 0 EXCEPT SELECT term, doc FROM temp.vocab_check)`,
      )
      .get() as { n: number };
    if (dfDrift.n > 0) out.push(`${dfDrift.n} terms whose chunks_fts_terms.df differs from FTS5's document frequency`);
    const countsDrift = db.prepare("SELECT (SELECT count(*) FROM chunks) - (SELECT count(*) FROM chunk_term_counts WHERE chunk IN (SELECT rowid FROM chunks)) AS missing, (SELECT count(*) FROM chunk_term_counts WHERE chunk NOT IN (SELECT rowid FROM chunks)) AS orphans").get() as { missing: number; orphans: number };
    if (countsDrift.missing > 0 || countsDrift.orphans > 0) out.push(`chunk_term_counts: ${countsDrift.missing} chunks without counts, ${countsDrift.orphans} counts without a chunk`);
    out.push(...postingsViolations(db));
    try {
      db.exec("INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')");
    } catch (err) {
      out.push(`FTS index out of step with chunks: ${(err as Error).message}`);
    }
    return out;
  } finally {
    db.close();
  }
}

/** Raw row counts, to prove a no-op wrote nothing. */
export function rowCounts(storeDir: string): { documents: number; chunks: number; fts: number; vectorState: number; maxChunkRowid: number } {
  const db = new Database(join(storeDir, "store.sqlite"), { readonly: true });
  try {
    return db
      .prepare(
        `SELECT (SELECT count(*) FROM documents) AS documents, (SELECT count(*) FROM chunks) AS chunks,
                (SELECT count(*) FROM chunks_fts) AS fts, (SELECT count(*) FROM vector_state) AS vectorState,
                (SELECT coalesce(max(rowid), 0) FROM chunks) AS maxChunkRowid`,
      )
      .get() as { documents: number; chunks: number; fts: number; vectorState: number; maxChunkRowid: number };
  } finally {
    db.close();
  }
}

/**
 * term_postings must hold, for every live chunk up to its `upto`, each of the chunk's terms with its count and
 * the chunk's FTS5 token count, once; the chunks past `upto` none (they are the readers' tail).
 */
function postingsViolations(db: Database.Database): string[] {
  const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'term_postings'").get();
  if (hasTable === undefined) return [];
  const upto = (db.prepare("SELECT upto FROM term_postings_upto WHERE id = 1").get() as { upto: number }).upto;
  const seen = new Map<string, number>();
  const out: string[] = [];
  for (const row of db.prepare("SELECT term, last_chunk, postings FROM term_postings").all() as { term: number; last_chunk: number; postings: Buffer }[]) {
    forEachPosting(row.postings, (rowid, tf, length) => {
      if (rowid > upto) out.push(`term_postings: chunk ${rowid} is past upto ${upto}`);
      if (rowid > row.last_chunk) out.push(`term_postings: chunk ${rowid} in a batch ending at ${row.last_chunk}`);
      const key = `${row.term}:${rowid}`;
      if (seen.has(key)) out.push(`term_postings: term ${row.term} lists chunk ${rowid} twice`);
      seen.set(key, tf * 1e6 + length);
    });
  }
  const live = db.prepare("SELECT c.chunk, c.counts, d.sz FROM chunk_term_counts c JOIN chunks_fts_docsize d ON d.id = c.chunk WHERE c.chunk <= ?").all(upto) as { chunk: number; counts: Buffer; sz: Buffer }[];
  for (const r of live) {
    const length = readVarint(r.sz, 0).value;
    for (const [term, tf] of decodeTermCounts(r.counts)) {
      if (seen.get(`${term}:${r.chunk}`) !== tf * 1e6 + length) out.push(`term_postings: term ${term} of chunk ${r.chunk} missing or with the wrong count or length`);
    }
  }
  return out.slice(0, 20);
}
