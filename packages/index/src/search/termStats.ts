import type { Db } from "../sqlite/openDatabase.js";
import type { Bm25TermStats } from "./bm25Corpus.js";
import { Bm25Stats } from "./bm25Stats.js";
import { Fts5Tokens } from "./fts5Tokens.js";
import { ftsPhrases } from "./ftsQuery.js";

/** A store's BM25 figures for one query's tokens, tokenised by FTS5 itself (see Bm25Corpus). */
export class TermStatsReader {
  readonly #stats: Bm25Stats;
  readonly #tokens: Fts5Tokens;
  readonly #read;

  constructor(db: Db) {
    this.#stats = new Bm25Stats(db);
    this.#tokens = new Fts5Tokens(db);
    // Totals and frequencies from one snapshot, as a search reads them.
    this.#read = db.transaction((query: string) => this.#of(query));
  }

  of(query: string): Bm25TermStats {
    return this.#read(query);
  }

  #of(query: string): Bm25TermStats {
    const { rows, tokens } = this.#stats.totals();
    const texts = ftsPhrases(query);
    const df: Record<string, number> = {};
    const multiTokenPhrases: string[] = [];
    if (texts.length === 0) return { rows, tokens, df, multiTokenPhrases };
    this.#tokens.tokens(texts).forEach((list, i) => {
      if (list.length !== 1) multiTokenPhrases.push(texts[i]!);
      for (const token of list) df[token] = this.#stats.term(token).df;
    });
    return { rows, tokens, df, multiTokenPhrases };
  }
}
