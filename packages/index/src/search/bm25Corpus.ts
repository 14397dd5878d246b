/**
 * The corpus figures BM25 reads (rows, tokens, each term's document frequency), given from outside the store:
 * in a sharded index the gateway sums every shard's, so each shard scores its rows as one store holding every
 * document would (the IDFs and the average length are the whole corpus's, not the shard's).
 */
export interface Bm25Corpus {
  readonly rows: number;
  readonly tokens: number;
  /** Document frequency by FTS5 token (a stem, lower-cased); absent means 0. */
  readonly df: Readonly<Record<string, number>>;
}

/** A query's own tokens and the store's figures for them: one shard's part of a Bm25Corpus. */
export interface Bm25TermStats extends Bm25Corpus {
  /** Word runs of the query that FTS5 splits into several tokens (ranked as phrases). */
  readonly multiTokenPhrases: readonly string[];
}

/** The whole corpus's figures from every shard's: sums (document frequencies per token). */
export function sumTermStats(parts: readonly Bm25Corpus[]): Bm25Corpus {
  let rows = 0;
  let tokens = 0;
  const df: Record<string, number> = {};
  for (const p of parts) {
    rows += p.rows;
    tokens += p.tokens;
    for (const [token, n] of Object.entries(p.df)) df[token] = (df[token] ?? 0) + n;
  }
  return { rows, tokens, df };
}
