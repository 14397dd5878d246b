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
  readonly #rowCounts;

  constructor(private readonly db: Db) {
    db.exec(`
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.attr_tok USING fts5(text, content = '', tokenize = '${CHUNKS_FTS_TOKENIZE}');
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.attr_tok_inst USING fts5vocab(temp, attr_tok, 'instance');
      CREATE VIRTUAL TABLE IF NOT EXISTS temp.attr_tok_row USING fts5vocab(temp, attr_tok, 'row');
    `);
    this.#insert = db.prepare<[number, string]>("INSERT INTO temp.attr_tok(rowid, text) VALUES (?, ?)");
    // Contentless, so 'delete-all' empties it whole: deleting rows one by one would leave delete markers
    // behind, and the scratch index would grow slower with every use.
    this.#clear = db.prepare("INSERT INTO temp.attr_tok(attr_tok) VALUES ('delete-all')");
    this.#instances = db.prepare<[], { term: string; doc: number; offset: number }>("SELECT term, doc, offset FROM temp.attr_tok_inst");
    this.#rowCounts = db.prepare<[], [string, number]>("SELECT term, cnt FROM temp.attr_tok_row").raw();
  }

  /** Each text's tokens, in order (a text with no token gives []). */
  tokens(texts: readonly string[]): string[][] {
    return this.#with(texts, () => {
      const out = texts.map(() => [] as { term: string; offset: number }[]);
      for (const r of this.#instances.iterate()) out[r.doc - 1]!.push({ term: r.term, offset: r.offset });
      return out.map((list) => list.sort((a, b) => a.offset - b.offset).map((t) => t.term));
    });
  }

  /**
   * Each text's token counts. One text at a time through the 'row' vocabulary (one row per distinct token)
   * rather than all at once through 'instance' (one row per token): a third less time, measured on 160 chunks.
   */
  counts(texts: readonly string[]): Map<string, number>[] {
    return texts.map((text) => this.#with([text], () => new Map(this.#rowCounts.all())));
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
