import type { Db } from "../sqlite/openDatabase.js";
import type { SearchFilters, SearchHit } from "../types.js";
import { FILTER_SQL, filterParams } from "./filterSql.js";
import { toFtsMatch } from "./ftsQuery.js";

/** BM25 over chunk text with FTS5's bm25() (k1 = 1.2, b = 0.75). */
export class Bm25Search {
  readonly #stmt;

  constructor(db: Db) {
    // ORDER BY rank (= bm25() for FTS5) lets FTS5 sort inside the virtual table; rowid breaks ties so equal
    // scores come back in a stable order.
    this.#stmt = db.prepare<{ match: string; k: number; docIds: string | null; sources: string | null }, SearchHit & { score: number }>(`
      SELECT c.id AS chunkId, c.doc_id AS docId, c.ordinal, c.start, c."end", c.text, -chunks_fts.rank AS score
      FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid
      WHERE chunks_fts MATCH @match AND ${FILTER_SQL}
      ORDER BY chunks_fts.rank, c.rowid
      LIMIT @k`);
  }

  /** Best first; empty when the query has no searchable words. Higher score is better. */
  search(query: string, k: number, filters: SearchFilters): SearchHit[] {
    const match = toFtsMatch(query);
    if (match === undefined) return [];
    return this.#stmt.all({ match, k, ...filterParams(filters) });
  }
}
