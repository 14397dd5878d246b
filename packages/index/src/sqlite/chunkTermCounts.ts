import type { Db } from "./openDatabase.js";
import { Fts5Tokens } from "../search/fts5Tokens.js";
import { readMeta, writeMeta } from "./meta.js";

/** Chunks tokenised per batch while filling in the counts of chunks from before schema v2. */
const BACKFILL_BATCH = 512;
const COMPLETE_KEY = "chunk_term_counts_complete";
/** Term ids kept in memory for ingest. */
const ID_CACHE = 200_000;

/** Unsigned LEB128: 7 bits per byte, low bits first. */
export function pushVarint(out: number[], value: number): void {
  let v = value;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

/** (term id, count) pairs, ids ascending, each id as the gap from the one before. */
export function encodeTermCounts(pairs: readonly (readonly [number, number])[]): Buffer {
  const out: number[] = [];
  let last = 0;
  for (const [id, tf] of pairs) {
    pushVarint(out, id - last);
    pushVarint(out, tf);
    last = id;
  }
  return Buffer.from(out);
}

/** The pairs back, as a map from term id to count. */
export function decodeTermCounts(blob: Uint8Array): Map<number, number> {
  const out = new Map<number, number>();
  let at = 0;
  let id = 0;
  const next = () => {
    let v = 0;
    let scale = 1;
    for (;;) {
      const b = blob[at++];
      if (b === undefined) throw new RangeError("truncated term counts");
      v += (b & 0x7f) * scale;
      if (b < 0x80) return v;
      scale *= 128;
    }
  };
  while (at < blob.length) {
    id += next();
    out.set(id, next());
  }
  return out;
}

/**
 * The counts of the term ids in `ids` (ascending) from an encodeTermCounts blob, into `out` (0 where absent):
 * completing a BM25 candidate needs a few terms of the ~100 a chunk has, so this stops at the last one
 * wanted and builds no map.
 */
export function termCountsOf(blob: Uint8Array, ids: readonly number[], out: number[]): void {
  let at = 0;
  let id = 0;
  let want = 0;
  for (let i = 0; i < ids.length; i++) out[i] = 0;
  const n = blob.length;
  while (at < n && want < ids.length) {
    let v = 0;
    let scale = 1;
    let b: number;
    do {
      b = blob[at++]!;
      v += (b & 0x7f) * scale;
      scale *= 128;
    } while (b >= 0x80);
    id += v;
    let tf = 0;
    scale = 1;
    do {
      b = blob[at++]!;
      tf += (b & 0x7f) * scale;
      scale *= 128;
    } while (b >= 0x80);
    while (want < ids.length && ids[want]! < id) want++;
    if (want < ids.length && ids[want] === id) out[want++] = tf;
  }
}

/**
 * The store's own record of FTS5's tokens, kept in step with chunks_fts inside the caller's transaction: every
 * token's document frequency (chunks_fts_terms) and every chunk's token counts (chunk_term_counts). FTS5 keeps
 * both only implicitly, in its postings: counting a word's rows, or finding its count in one row, means reading
 * the word's whole postings list. Tokens come from FTS5's tokenizer itself (Fts5Tokens).
 */
export class ChunkTermCounts {
  readonly #tokens: Fts5Tokens;
  readonly #addTerm;
  readonly #termId;
  readonly #insertCounts;
  readonly #readCounts;
  readonly #readMany;
  readonly #subDf;
  readonly #bumpDf;
  /** Term ids seen lately (bounded: a vocabulary can have millions of terms). */
  readonly #ids = new Map<string, number>();

  constructor(private readonly db: Db) {
    this.#tokens = new Fts5Tokens(db);
    this.#addTerm = db.prepare<[string, number], { id: number }>(
      "INSERT INTO chunks_fts_terms (term, df) VALUES (?, ?) ON CONFLICT (term) DO UPDATE SET df = df + excluded.df RETURNING id",
    );
    this.#termId = db.prepare<[string], { id: number }>("SELECT id FROM chunks_fts_terms WHERE term = ?");
    this.#insertCounts = db.prepare<[number, Buffer]>("INSERT INTO chunk_term_counts (chunk, counts) VALUES (?, ?)");
    this.#readCounts = db.prepare<[number], { counts: Buffer }>("SELECT counts FROM chunk_term_counts WHERE chunk = ?");
    this.#readMany = db.prepare<[string], [number, Buffer]>("SELECT chunk, counts FROM chunk_term_counts WHERE chunk IN (SELECT value FROM json_each(?))").raw();
    this.#subDf = db.prepare<[number, number]>("UPDATE chunks_fts_terms SET df = df - ? WHERE id = ?");
    this.#bumpDf = db.prepare<[number, number, string]>("UPDATE chunks_fts_terms SET df = df + ? WHERE id = ? AND term = ?");
  }

  /** New chunks: their counts, and each of their tokens' document frequency up by the chunks holding it. */
  add(chunks: readonly { rowid: number; text: string }[], o: { countDf: boolean } = { countDf: true }): void {
    const perChunk = this.#tokens.counts(chunks.map((c) => c.text));
    const rows = new Map<string, number>();
    for (const counts of perChunk) for (const term of counts.keys()) rows.set(term, (rows.get(term) ?? 0) + 1);
    const ids = new Map<string, number>();
    for (const [term, n] of rows) {
      // A remembered id is checked with the term in the same statement (a rolled-back transaction may have
      // given the id away again); otherwise the upsert finds or makes the row.
      const cached = this.#ids.get(term);
      let id: number;
      if (o.countDf) id = cached !== undefined && this.#bumpDf.run(n, cached, term).changes === 1 ? cached : this.#addTerm.get(term, n)!.id;
      else id = this.#termId.get(term)?.id ?? this.#addTerm.get(term, 0)!.id;
      this.#remember(term, id);
      ids.set(term, id);
    }
    chunks.forEach((c, i) => {
      const pairs = [...perChunk[i]!].map(([term, tf]) => [ids.get(term)!, tf] as const).sort((a, b) => a[0] - b[0]);
      this.#insertCounts.run(c.rowid, encodeTermCounts(pairs));
    });
  }

  #remember(term: string, id: number): void {
    if (this.#ids.size >= ID_CACHE) this.#ids.delete(this.#ids.keys().next().value!);
    this.#ids.set(term, id);
  }

  /** Chunks about to be deleted: each of their tokens' document frequency down (their counts go with the rows). */
  remove(rowids: readonly number[]): void {
    const rows = new Map<number, number>();
    for (const rowid of rowids) {
      const blob = this.#readCounts.get(rowid)?.counts;
      if (blob === undefined) continue;
      for (const id of decodeTermCounts(blob).keys()) rows.set(id, (rows.get(id) ?? 0) + 1);
    }
    for (const [id, n] of rows) this.#subDf.run(n, id);
  }

  /** A chunk's token counts by term id (empty when it has none recorded). */
  /**
   * The counts blobs of many chunks in one statement (chunks without one are absent): a point read per chunk
   * costs ~7 µs at a million chunks, ~3 µs this way with the rowids ascending.
   */
  blobs(rowids: readonly number[]): Map<number, Buffer> {
    const out = new Map<number, Buffer>();
    if (rowids.length === 0) return out;
    for (const [chunk, counts] of this.#readMany.all(JSON.stringify(rowids))) out.set(chunk, counts);
    return out;
  }

  /** The chunk's counts blob as stored (undefined when it has none). */
  blob(rowid: number): Buffer | undefined {
    return this.#readCounts.get(rowid)?.counts;
  }

  read(rowid: number): Map<number, number> {
    const blob = this.#readCounts.get(rowid)?.counts;
    return blob === undefined ? new Map() : decodeTermCounts(blob);
  }

  /**
   * Records the counts of chunks made before schema v2 (their document frequencies came from FTS5's vocabulary
   * in the migration), in batches, each its own transaction; says how far it got. Once done it is recorded and
   * never looked for again.
   */
  backfill(progress: (done: number, total: number) => void = () => {}): number {
    if (readMeta(this.db).get(COMPLETE_KEY) === "1") return 0;
    const missing = this.db.prepare<[], { rowid: number; text: string }>(
      `SELECT rowid, text FROM chunks WHERE rowid NOT IN (SELECT chunk FROM chunk_term_counts) ORDER BY rowid LIMIT ${BACKFILL_BATCH}`,
    );
    const total = (this.db.prepare("SELECT count(*) AS n FROM chunks WHERE rowid NOT IN (SELECT chunk FROM chunk_term_counts)").get() as { n: number }).n;
    let done = 0;
    for (;;) {
      const batch = missing.all();
      if (batch.length === 0) break;
      this.db.transaction(() => this.add(batch, { countDf: false }))();
      done += batch.length;
      progress(done, total);
    }
    writeMeta(this.db, { [COMPLETE_KEY]: "1" });
    return done;
  }
}
