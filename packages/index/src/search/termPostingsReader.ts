import type { Db } from "../sqlite/openDatabase.js";
import { chunksAfter, invert } from "../sqlite/termPostings.js";
import { RowBits } from "./rowBits.js";

/**
 * Reads term_postings (TermPostingsWriter's batches) for BM25, plus the chunks past the last batch (the tail)
 * from chunk_term_counts, kept in memory and extended between searches. Call refresh() inside the search's
 * read transaction first.
 *
 * Deleted chunks are skipped, and what this holds for them stays bounded by the postings that still name
 * them, not by how many chunks were ever deleted: a store whose documents are replaced over and over deletes
 * chunks without end (AUTOINCREMENT never reuses a rowid), and term_postings_dead lists every one.
 */
export class TermPostingsReader {
  readonly #upto;
  readonly #rows;
  readonly #chunks;
  readonly #lastDead;
  readonly #deadRows;
  /** term id → flat (rowid, tf, length) triples of tail chunks. */
  #tail = new Map<number, number[]>();
  /** The last chunk the batches covered when the tail was started (it holds only chunks past it). */
  #tailFrom = -1;
  /** The last chunk read into the tail. */
  #tailSeen = 0;
  /** Chunks read into the tail, deleted since or not. */
  #tailChunks = 0;
  /**
   * Deleted chunks a batch may hold: those at or below the batches' end when their deletion is read. A batch
   * is never rewritten, so they stay; one bit each.
   */
  readonly #deadInBatches = new RowBits();
  /**
   * Deleted chunks that were read into the tail first. No batch holds them (a batch written after their
   * deletion leaves them out), so they go when the tail is read afresh.
   */
  #deadInTail = new Set<number>();
  /** The last term_postings_dead entry read. */
  #deadSeen = 0;

  constructor(db: Db) {
    this.#upto = db.prepare<[], { upto: number }>("SELECT upto FROM term_postings_upto WHERE id = 1");
    this.#lastDead = db.prepare<[], number>("SELECT coalesce(max(seq), 0) FROM term_postings_dead").pluck();
    this.#deadRows = db.prepare<[number, number, number], number>("SELECT chunk FROM term_postings_dead WHERE seq > ? AND seq <= ? AND chunk <= ?").pluck();
    this.#rows = db.prepare<[number], [number, Buffer]>("SELECT last_chunk, postings FROM term_postings WHERE term = ? ORDER BY last_chunk").raw();
    this.#chunks = chunksAfter(db);
  }

  /** Whether a chunk these postings name was deleted (as of the last refresh). */
  deleted(rowid: number): boolean {
    return this.#deadInTail.has(rowid) || this.#deadInBatches.has(rowid);
  }

  /** What this holds between searches: deleted chunks it skips, and chunks in the tail (deleted since or not). */
  get held(): { deadRows: number; tailChunks: number } {
    return { deadRows: this.#deadInBatches.size + this.#deadInTail.size, tailChunks: this.#tailChunks };
  }

  /** Brings the tail up to this snapshot: drops what a new batch now covers, adds chunks committed since. */
  refresh(): void {
    const upto = this.#upto.get()?.upto ?? 0;
    if (upto !== this.#tailFrom) this.#restartTail(upto);
    const lastDead = this.#lastDead.get()!;
    if (lastDead > this.#deadSeen) {
      // A chunk deleted past the tail was never read here and no batch will hold it: nothing names it.
      for (const chunk of this.#deadRows.all(this.#deadSeen, lastDead, this.#tailSeen)) {
        if (chunk <= upto) this.#deadInBatches.add(chunk);
        else this.#deadInTail.add(chunk);
      }
      this.#deadSeen = lastDead;
    }
    // Mostly deleted chunks in the tail (documents replaced while too few chunks commit to fill a batch): read
    // afresh, it holds the live ones only. That costs a read of the live tail per as many deletions or more.
    if (this.#deadInTail.size * 2 > this.#tailChunks) this.#restartTail(upto);
    for (;;) {
      const rows = this.#chunks.all(this.#tailSeen, 4096);
      if (rows.length === 0) return;
      for (const [term, triples] of invert(rows)) {
        const list = this.#tail.get(term);
        if (list === undefined) this.#tail.set(term, triples);
        else for (const x of triples) list.push(x);
      }
      this.#tailSeen = rows[rows.length - 1]!.chunk;
      this.#tailChunks += rows.length;
    }
  }

  /** The batches of `term`'s postings, rowids ascending, each as [its largest rowid, encodePostings blob]. */
  batches(term: number): [number, Buffer][] {
    return this.#rows.all(term);
  }

  /** `term`'s postings past the batches, as flat (rowid, tf, length) triples (empty when none). */
  tail(term: number): readonly number[] {
    return this.#tail.get(term) ?? [];
  }

  #restartTail(upto: number): void {
    this.#tail = new Map();
    this.#tailFrom = upto;
    this.#tailSeen = upto;
    this.#tailChunks = 0;
    this.#deadInTail = new Set();
  }
}
