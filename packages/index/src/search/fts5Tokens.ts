import type { Db } from "../sqlite/openDatabase.js";

/** The tokenizer of chunks_fts (migration v1). Exact BM25 depends on tokenising exactly as the index did. */
export const CHUNKS_FTS_TOKENIZE = "porter unicode61";

/**
 * FTS5's own tokenizer, used from JavaScript: texts go into a scratch FTS5 table in the connection's temp
 * schema (same tokenizer as chunks_fts), and its fts5vocab table says which tokens they hold. So the terms,
 * counts and lengths BM25 needs are FTS5's, stems and diacritics included, by construction, never a
 * re-implementation that could drift. The scratch table is emptied after every use (it is per connection,
 * so concurrent connections never share it).
 */
export class Fts5Tokens {
  readonly #insert;
  readonly #clear;
  readonly #instances;
  readonly #instanceKeys;

  constructor(private readonly db: Db) {
    db.exec(`
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.attr_tok USING fts5(text, content = '', tokenize = '${CHUNKS_FTS_TOKENIZE}');
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.attr_tok_inst USING fts5vocab(temp, attr_tok, 'instance');
    `);
    this.#insert = db.prepare<[number, string]>("INSERT INTO temp.attr_tok(rowid, text) VALUES (?, ?)");
    // Contentless, so 'delete-all' empties it whole: deleting rows one by one would leave delete markers
    // behind, and the scratch index would grow slower with every use.
    this.#clear = db.prepare("INSERT INTO temp.attr_tok(attr_tok) VALUES ('delete-all')");
    this.#instances = db.prepare<[], { term: string; doc: number; offset: number }>("SELECT term, doc, offset FROM temp.attr_tok_inst");
    this.#instanceKeys = db.prepare<[], [string, number]>("SELECT term, doc FROM temp.attr_tok_inst").raw();
  }

  /** Each text's tokens, in order (a text with no token gives []). */
  tokens(texts: readonly string[]): string[][] {
    return this.#with(texts, () => {
      const out = texts.map(() => [] as { term: string; offset: number }[]);
      for (const r of this.#instances.iterate()) out[r.doc - 1]!.push({ term: r.term, offset: r.offset });
      return out.map((list) => list.sort((a, b) => a.offset - b.offset).map((t) => t.term));
    });
  }

  /** Each text's token counts. */
  counts(texts: readonly string[]): Map<string, number>[] {
    if (texts.length === 0) return [];
    return this.#with(texts, () => {
      const out = texts.map(() => new Map<string, number>());
      // Instances come term by term, document by document: counted here, without SQLite sorting them.
      for (const [term, doc] of this.#instanceKeys.iterate()) {
        const counts = out[doc - 1]!;
        counts.set(term, (counts.get(term) ?? 0) + 1);
      }
      return out;
    });
  }



  #with<T>(texts: readonly string[], read: () => T): T {
    try {
      // Rowids from 1: text i is row i + 1 (the reads below subtract it again).
      texts.forEach((text, i) => this.#insert.run(i + 1, text));
      return read();
    } finally {
      this.#clear.run();
    }
  }
}
