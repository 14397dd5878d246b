import type Database from "better-sqlite3";
import type { Db } from "./openDatabase.js";
import { decodeTermCounts, pushVarint } from "./chunkTermCounts.js";
import { readVarint } from "../search/bm25Stats.js";

/** Chunks per batch of postings: one row per term per batch keeps the writes a small share of ingest. */
export const POSTINGS_BATCH = 8192;

/** (rowid gap, count, chunk length) triples as unsigned LEB128 varints. */
export function encodePostings(triples: readonly number[]): Buffer {
  const out: number[] = [];
  let last = 0;
  for (let i = 0; i < triples.length; i += 3) {
    pushVarint(out, triples[i]! - last);
    pushVarint(out, triples[i + 1]!);
    pushVarint(out, triples[i + 2]!);
    last = triples[i]!;
  }
  return Buffer.from(out);
}

/** Calls `each(rowid, tf, length)` for every posting in a row's blob, rowids ascending. */
export function forEachPosting(blob: Uint8Array, each: (rowid: number, tf: number, length: number) => void): void {
  let at = 0;
  let rowid = 0;
  const n = blob.length;
  while (at < n) {
    let v = 0;
    let scale = 1;
    let b: number;
    do {
      b = blob[at++]!;
      v += (b & 0x7f) * scale;
      scale *= 128;
    } while (b >= 0x80);
    rowid += v;
    let tf = 0;
    scale = 1;
    do {
      b = blob[at++]!;
      tf += (b & 0x7f) * scale;
      scale *= 128;
    } while (b >= 0x80);
    let len = 0;
    scale = 1;
    do {
      b = blob[at++]!;
      len += (b & 0x7f) * scale;
      scale *= 128;
    } while (b >= 0x80);
    each(rowid, tf, len);
  }
}

/** The chunks past `after` with their term counts and token counts, rowids ascending, at most `limit`. */
export function chunksAfter(db: Db): Database.Statement<[number, number], { chunk: number; counts: Buffer; sz: Buffer | null }> {
  return db.prepare<[number, number], { chunk: number; counts: Buffer; sz: Buffer | null }>(
    "SELECT c.chunk AS chunk, c.counts AS counts, d.sz AS sz FROM chunk_term_counts c LEFT JOIN chunks_fts_docsize d ON d.id = c.chunk WHERE c.chunk > ? ORDER BY c.chunk LIMIT ?",
  );
}

/** Postings of chunks, grouped by term: term id → flat (rowid, tf, length) triples. */
export function invert(rows: readonly { chunk: number; counts: Buffer; sz: Buffer | null }[]): Map<number, number[]> {
  const byTerm = new Map<number, number[]>();
  for (const r of rows) {
    const length = r.sz === null ? 0 : readVarint(r.sz, 0).value;
    for (const [term, tf] of decodeTermCounts(r.counts)) {
      let list = byTerm.get(term);
      if (list === undefined) byTerm.set(term, (list = []));
      list.push(r.chunk, tf, length);
    }
  }
  return byTerm;
}

/**
 * Writes the inverted index (term_postings) for committed chunks, a batch of POSTINGS_BATCH chunks at a time,
 * after their own transactions: the postings are derived (chunk_term_counts, chunks_fts_docsize), so a crash
 * between a chunk's commit and its batch loses nothing, and readers score the chunks past the last batch from
 * chunk_term_counts themselves (TermPostingsReader). Deleted chunks stay in old batches; their rowids are
 * never reused (AUTOINCREMENT), and readers skip them.
 */
export class TermPostingsWriter {
  readonly #pending;
  readonly #upto;
  readonly #chunks;
  readonly #insert;
  readonly #setUpto;
  readonly #batch: (limit: number) => number;

  constructor(
    private readonly db: Db,
    readonly batchSize: number = POSTINGS_BATCH,
  ) {
    this.#upto = db.prepare<[], { upto: number }>("SELECT upto FROM term_postings_upto WHERE id = 1");
    this.#pending = db.prepare<[number], { n: number }>("SELECT count(*) AS n FROM chunk_term_counts WHERE chunk > ?");
    this.#chunks = chunksAfter(db);
    this.#insert = db.prepare<[number, number, Buffer]>("INSERT INTO term_postings (term, last_chunk, postings) VALUES (?, ?, ?)");
    this.#setUpto = db.prepare<[number]>("UPDATE term_postings_upto SET upto = ? WHERE id = 1");
    this.#batch = db.transaction((limit: number) => {
      const rows = this.#chunks.all(this.upto(), limit);
      if (rows.length === 0) return 0;
      const last = rows[rows.length - 1]!.chunk;
      for (const [term, triples] of invert(rows)) this.#insert.run(term, last, encodePostings(triples));
      this.#setUpto.run(last);
      return rows.length;
    });
  }

  /** The last chunk the batches cover. */
  upto(): number {
    return this.#upto.get()?.upto ?? 0;
  }

  /** Writes every whole batch that is due (all of them with `partial`, the rest too); returns the chunks written. */
  flush(o: { partial?: boolean; progress?: (done: number, total: number) => void } = {}): number {
    const total = this.#pending.get(this.upto())!.n;
    let done = 0;
    while (total - done >= this.batchSize || (o.partial === true && done < total)) {
      const n = this.#batch(this.batchSize);
      if (n === 0) break;
      done += n;
      o.progress?.(done, total);
    }
    return done;
  }
}
