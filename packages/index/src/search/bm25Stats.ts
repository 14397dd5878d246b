import type { Db } from "../sqlite/openDatabase.js";

/** FTS5's bm25() constants (fts5_aux.c). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** IDF exactly as FTS5 computes it: ln((N − n + 0.5) / (n + 0.5)), and 1e-6 where that is ≤ 0. */
export function bm25Idf(rows: number, hits: number): number {
  const idf = Math.log((rows - hits + 0.5) / (hits + 0.5));
  return idf <= 0 ? 1e-6 : idf;
}

/** One phrase's share of a row's score, as FTS5 computes it (without the IDF factor). */
export function bm25TermPart(tf: number, docTokens: number, avgdl: number): number {
  return (tf * (BM25_K1 + 1.0)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * docTokens) / avgdl));
}

/** SQLite's varint (FTS5 uses the same): big-endian 7-bit groups, the 9th byte whole. */
export function readVarint(bytes: Uint8Array, at: number): { value: number; next: number } {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const byte = bytes[at + i];
    if (byte === undefined) throw new RangeError("truncated varint");
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return { value, next: at + i + 1 };
  }
  const last = bytes[at + 8];
  if (last === undefined) throw new RangeError("truncated varint");
  return { value: value * 256 + last, next: at + 9 };
}

/**
 * The corpus figures FTS5's bm25() reads, from FTS5's own records: the row count and total token count
 * (the "averages" record, id 1 of chunks_fts_data), each row's token count (chunks_fts_docsize), and each
 * token's document frequency (chunks_fts_terms, kept by the store in the same transactions as the index).
 */
export class Bm25Stats {
  readonly #averages;
  readonly #df;

  constructor(db: Db) {
    this.#averages = db.prepare<[], { block: Buffer }>("SELECT block FROM chunks_fts_data WHERE id = 1");
    this.#df = db.prepare<[string], { id: number; df: number }>("SELECT id, df FROM chunks_fts_terms WHERE term = ?");
  }

  /** Rows and tokens in the index (0, 0 when it is empty). */
  totals(): { rows: number; tokens: number } {
    const row = this.#averages.get();
    if (row === undefined || row.block.length === 0) return { rows: 0, tokens: 0 };
    const rows = readVarint(row.block, 0);
    const tokens = readVarint(row.block, rows.next);
    return { rows: rows.value, tokens: tokens.value };
  }

  /** The token's id in chunk_term_counts and its document frequency (id -1 and 0 when no row holds it). */
  term(token: string): { id: number; df: number } {
    return this.#df.get(token) ?? { id: -1, df: 0 };
  }
}
