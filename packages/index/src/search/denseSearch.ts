import type { Db } from "../sqlite/openDatabase.js";
import type { SearchFilters, SearchHit } from "../types.js";
import type { VectorIndex } from "../vectors/VectorIndex.js";
import { FILTER_SQL, filterParams, hasFilters } from "./filterSql.js";

/** Over-fetch factor for filtered searches: HNSW cannot filter while it walks the graph. */
const FILTER_OVERFETCH = 8;

type ChunkRow = Omit<SearchHit, "score" | "ranks"> & { key: number };

/** Cosine nearest neighbours from usearch, joined to their chunk rows (and filters) in SQLite. */
export class DenseSearch {
  readonly #rows;

  constructor(db: Db) {
    this.#rows = db.prepare<{ keys: string; docIds: string | null; sources: string | null }, ChunkRow>(`
      SELECT c.rowid AS key, c.id AS chunkId, c.doc_id AS docId, c.ordinal, c.start, c."end", c.text
      FROM chunks c
      WHERE c.rowid IN (SELECT value FROM json_each(@keys)) AND ${FILTER_SQL}`);
  }

  /**
   * Best first. With filters, fetches 8·k neighbours, keeps those that pass, and widens the search (×4)
   * until k pass or the whole index was searched — so a narrow filter costs more, but never misses hits
   * the index can find.
   */
  search(index: VectorIndex, query: Float32Array, k: number, filters: SearchFilters): SearchHit[] {
    const filtered = hasFilters(filters);
    let fetch = Math.min(index.size, filtered ? k * FILTER_OVERFETCH : k);
    for (;;) {
      const matches = index.search(query, fetch);
      const rows = new Map(this.#rows.all({ keys: JSON.stringify(matches.map((m) => m.key)), ...filterParams(filters) }).map((r) => [r.key, r]));
      const hits: SearchHit[] = [];
      for (const m of matches) {
        const row = rows.get(m.key);
        if (!row) continue; // filtered out
        const { key: _key, ...hit } = row;
        hits.push({ ...hit, score: m.similarity });
        if (hits.length === k) break;
      }
      if (hits.length === k || !filtered || fetch >= index.size) return hits;
      fetch = Math.min(index.size, fetch * 4);
    }
  }
}
