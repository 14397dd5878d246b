import { bm25TermPart } from "./bm25Stats.js";
import { bestFirstOf } from "./bestFirst.js";

/** Rows per page of the accumulator (768 bytes of scores and lengths): rowid >>> PAGE_BITS names a page. */
const PAGE_BITS = 6;
const PAGE = 1 << PAGE_BITS;
const IN_PAGE = PAGE - 1;

/**
 * Term-at-a-time BM25 scoring of postings into one accumulator per rowid, then the rows best first. A
 * question's words have hundreds of thousands of postings at a million chunks, so this is the hot loop of
 * BM25: postings are decoded inline (no callback per posting), the accumulator doubles as the "seen" flag
 * (every posting adds a positive share: IDF ≥ 1e-6, tf ≥ 1), and only the rows that can still matter are
 * ranked (see ranked()).
 *
 * The accumulator is paged: a directory of 4 bytes per 64 rowids gives each run of 64 rowids that postings
 * touch its page. Rowids are never reused (AUTOINCREMENT), so a store whose documents are replaced over and
 * over has rowids far past its rows; arrays indexed by rowid (12 bytes each) grew with every chunk ever
 * written, where pages grow with the rows a search touches. Postings come in rowid order, so consecutive
 * postings mostly fall in one page, nearly as cheap as a plain array.
 */
export class PostingScores {
  /** Each rowid range's page (rowid >>> PAGE_BITS): the page's first slot in #acc, or -1 when it has none. */
  #pageAt = new Int32Array(0);
  /** The score of each touched row, at slot = its page's first slot + (rowid & IN_PAGE). */
  #acc = new Float64Array(0);
  /** Token count of each touched row, as its postings give it (slots as #acc). */
  #len = new Uint32Array(0);
  /** The rowid range of each page taken, in the order taken. */
  #pageRange = new Int32Array(64);
  #pages = 0;
  /** Pages ranked() left taken, so lengthOf() still finds them: given back before the next postings. */
  #stale = false;
  /** The slot of each row touched since the last ranked(). */
  #touched: Int32Array = new Int32Array(1024);
  /** ranked()'s copy of the touched rows' scores, in touched order. */
  #scores = new Float64Array(0);
  #count = 0;

  /** Bytes this holds (the directory, the pages and the ranking's scratch), for tests and reports. */
  get bytes(): number {
    return this.#pageAt.byteLength + this.#acc.byteLength + this.#len.byteLength + this.#pageRange.byteLength + this.#touched.byteLength + this.#scores.byteLength;
  }

  /** The token count the postings gave for `rowid` (valid for rows touched since the last ranked()). */
  lengthOf(rowid: number): number {
    return this.#len[this.#pageAt[rowid >>> PAGE_BITS]! + (rowid & IN_PAGE)]!;
  }

  /**
   * Adds `idf × part(tf, length)` for every posting of an encodePostings blob ((rowid gap, tf, length)
   * varints). `last` is the blob's largest rowid. The share is computed exactly as bm25TermPart does, in the
   * same order per row as FTS5 sums phrases, so scores equal FTS5's bit for bit.
   */
  addBlob(blob: Uint8Array, last: number, idf: number, avgdl: number): void {
    this.#reserve(last);
    const pageAt = this.#pageAt;
    let acc = this.#acc;
    let len = this.#len;
    let touched = this.#touched;
    let count = this.#count;
    let range = -1;
    let page = 0;
    let at = 0;
    let rowid = 0;
    const n = blob.length;
    while (at < n) {
      let b = blob[at++]!;
      let v = b & 0x7f;
      for (let scale = 128; b >= 0x80; scale *= 128) {
        b = blob[at++]!;
        v += (b & 0x7f) * scale;
      }
      rowid += v;
      b = blob[at++]!;
      let tf = b & 0x7f;
      for (let scale = 128; b >= 0x80; scale *= 128) {
        b = blob[at++]!;
        tf += (b & 0x7f) * scale;
      }
      b = blob[at++]!;
      let length = b & 0x7f;
      for (let scale = 128; b >= 0x80; scale *= 128) {
        b = blob[at++]!;
        length += (b & 0x7f) * scale;
      }
      if (rowid >>> PAGE_BITS !== range) {
        range = rowid >>> PAGE_BITS;
        page = pageAt[range]!;
        if (page < 0) {
          page = this.#takePage(range);
          acc = this.#acc;
          len = this.#len;
        }
      }
      const slot = page + (rowid & IN_PAGE);
      const before = acc[slot]!;
      if (before === 0) {
        if (count === touched.length) touched = this.#growTouched(count);
        touched[count++] = slot;
        len[slot] = length;
      }
      acc[slot] = before + idf * bm25TermPart(tf, length, avgdl);
    }
    this.#count = count;
  }

  /** The same for flat (rowid, tf, length) triples, rowids ascending (the postings not yet in a blob). */
  addTriples(triples: readonly number[], idf: number, avgdl: number): void {
    if (triples.length === 0) return;
    this.#reserve(triples[triples.length - 3]!);
    for (let i = 0; i < triples.length; i += 3) {
      const rowid = triples[i]!;
      const length = triples[i + 2]!;
      let page = this.#pageAt[rowid >>> PAGE_BITS]!;
      if (page < 0) page = this.#takePage(rowid >>> PAGE_BITS);
      const slot = page + (rowid & IN_PAGE);
      const before = this.#acc[slot]!;
      if (before === 0) {
        if (this.#count === this.#touched.length) this.#growTouched(this.#count);
        this.#touched[this.#count++] = slot;
        this.#len[slot] = length;
      }
      this.#acc[slot] = before + idf * bm25TermPart(triples[i + 1]!, length, avgdl);
    }
  }

  /**
   * The touched rows best first (ties by rowid), as { rowid, partial }, and the accumulator cleared for the
   * next search. Only rows whose score is at least τ − slack are ranked, τ being the k-th best score among
   * rows `live` accepts: with `slack` the most any score still to be added can give a row, a row below that
   * ends below k live rows whatever is added, so it is never in the top k, and a caller that stops at its
   * own bound never reaches it. With fewer than k live rows, every row is ranked.
   */
  ranked(k: number, slack: number, live: (rowid: number) => boolean): Iterable<{ rowid: number; partial: number }> {
    const acc = this.#acc;
    const pageRange = this.#pageRange;
    const touched = this.#touched;
    const count = this.#count;
    const rowidAt = (slot: number) => (pageRange[slot >>> PAGE_BITS]! << PAGE_BITS) | (slot & IN_PAGE);
    if (this.#scores.length < count) this.#scores = new Float64Array(touched.length);
    const scores = this.#scores;
    // One pass in touched order (scattered over the accumulator: the costly reads) copies the scores out,
    // clears them and finds the k-th best live one (τ); the pass after it reads the copy in order.
    const best = new KthBest(k);
    for (let i = 0; i < count; i++) {
      const slot = touched[i]!;
      const score = acc[slot]!;
      scores[i] = score;
      acc[slot] = 0;
      if (best.beats(score) && live(rowidAt(slot))) best.add(score);
    }
    this.#count = 0;
    this.#stale = true;
    const cut = best.kth() - slack;
    const rowids = new Float64Array(count);
    const ranks = new Float64Array(count);
    let kept = 0;
    for (let i = 0; i < count; i++) {
      const score = scores[i]!;
      if (score >= cut) {
        rowids[kept] = rowidAt(touched[i]!);
        // FTS5's rank is −score; 0 − x is exactly −x.
        ranks[kept++] = -score;
      }
    }
    return bestFirstOf(rowids.subarray(0, kept), ranks.subarray(0, kept));
  }

  /** Gives back the pages the last ranking left taken, and makes the directory reach rowid `last`. */
  #reserve(last: number): void {
    if (this.#stale) {
      for (let p = 0; p < this.#pages; p++) this.#pageAt[this.#pageRange[p]!] = -1;
      this.#pages = 0;
      this.#stale = false;
    }
    const ranges = (last >>> PAGE_BITS) + 1;
    if (ranges <= this.#pageAt.length) return;
    const grown = new Int32Array(Math.max(ranges, Math.ceil(this.#pageAt.length * 1.5), 1024)).fill(-1);
    grown.set(this.#pageAt);
    this.#pageAt = grown;
  }

  /** A page for rowid range `range` (its scores all 0: ranked() clears every row it touched). */
  #takePage(range: number): number {
    if (this.#pages === this.#pageRange.length) {
      const grown = new Int32Array(this.#pages * 2);
      grown.set(this.#pageRange);
      this.#pageRange = grown;
    }
    const page = this.#pages << PAGE_BITS;
    if (page + PAGE > this.#acc.length) {
      const size = Math.max(page + PAGE, Math.ceil(this.#acc.length * 1.5));
      const acc = new Float64Array(size);
      acc.set(this.#acc);
      const len = new Uint32Array(size);
      len.set(this.#len);
      this.#acc = acc;
      this.#len = len;
    }
    this.#pageRange[this.#pages++] = range;
    this.#pageAt[range] = page;
    return page;
  }

  #growTouched(count: number): Int32Array {
    const grown = new Int32Array(count * 2);
    grown.set(this.#touched);
    this.#touched = grown;
    return grown;
  }
}

/** The k-th best of the scores added (−∞ until k are): a min-heap of the best k so far. */
class KthBest {
  readonly #heap: Float64Array;
  #size = 0;

  constructor(readonly k: number) {
    this.#heap = new Float64Array(Math.max(k, 1));
  }

  /** Whether `score` would enter the best k (callers check this first: most scores do not). */
  beats(score: number): boolean {
    return this.#size < this.k || score > this.#heap[0]!;
  }

  add(score: number): void {
    const heap = this.#heap;
    const k = this.k;
    if (this.#size < k) {
      let at = this.#size++;
      while (at > 0) {
        const parent = (at - 1) >> 1;
        if (heap[parent]! <= score) break;
        heap[at] = heap[parent]!;
        at = parent;
      }
      heap[at] = score;
      return;
    }
    let at = 0;
    for (;;) {
      const l = 2 * at + 1;
      if (l >= k) break;
      const c = l + 1 < k && heap[l + 1]! < heap[l]! ? l + 1 : l;
      if (heap[c]! >= score) break;
      heap[at] = heap[c]!;
      at = c;
    }
    heap[at] = score;
  }

  kth(): number {
    if (this.k <= 0) return Infinity;
    return this.#size < this.k ? -Infinity : this.#heap[0]!;
  }
}
