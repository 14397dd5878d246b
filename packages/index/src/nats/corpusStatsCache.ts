import Database from "better-sqlite3";
import type { TermStats } from "@attr-rag/contracts";
import { Fts5Tokens } from "../search/fts5Tokens.js";
import { ftsPhrases } from "../search/ftsQuery.js";

/** Tokens remembered at most; past it the cache starts again (a gateway's vocabulary, not a corpus's). */
const MAX_TOKENS = 200_000;

/**
 * The gateway's memory of every shard's BM25 figures (rows, tokens, each token's document frequency), so a
 * search whose tokens are all known skips the counting round. Each shard's figures are valid at the version
 * they were counted at (its last applied ingest log entry); a shard that has moved on answers `stale`, and the
 * whole cache starts again. Tokens are found here as the shards find them: FTS5's own tokenizer (the chunks'
 * `porter unicode61`) in an in-memory SQLite.
 */
export class CorpusStatsCache {
  readonly #shards: number;
  readonly #tokenizer: Fts5Tokens;
  #versions: number[] | undefined;
  #totals: { rows: number; tokens: number }[] = [];
  #df = new Map<string, number[]>();

  constructor(shards: number) {
    this.#shards = shards;
    this.#tokenizer = new Fts5Tokens(new Database(":memory:"));
  }

  /** The query's tokens, and its word runs FTS5 splits into several tokens (a sharded index refuses those). */
  tokenize(query: string): { tokens: string[]; multiTokenPhrases: string[] } {
    const phrases = ftsPhrases(query);
    if (phrases.length === 0) return { tokens: [], multiTokenPhrases: [] };
    const lists = this.#tokenizer.tokens(phrases);
    return { tokens: lists.flat(), multiTokenPhrases: phrases.filter((_, i) => lists[i]!.length !== 1) };
  }

  /** The corpus's figures for these tokens and the versions they hold at, when every token is known. */
  lookup(tokens: readonly string[]): { corpus: TermStats; versions: number[] } | undefined {
    if (this.#versions === undefined) return undefined;
    const documentFrequency: Record<string, number> = {};
    for (const token of tokens) {
      const perShard = this.#df.get(token);
      if (perShard === undefined) return undefined;
      documentFrequency[token] = perShard.reduce((a, b) => a + b, 0);
    }
    const rows = this.#totals.reduce((n, t) => n + t.rows, 0);
    const tokenCount = this.#totals.reduce((n, t) => n + t.tokens, 0);
    return { corpus: { rows, tokens: tokenCount, documentFrequency, multiTokenPhrases: [], version: 0 }, versions: [...this.#versions] };
  }

  /** Every shard's answer for one query (shard order): kept, after a reset when any shard's version moved. */
  remember(parts: readonly TermStats[]): void {
    const versions = parts.map((p) => p.version);
    if (this.#versions === undefined || versions.some((v, i) => v !== this.#versions![i]) || this.#df.size > MAX_TOKENS) this.clear();
    this.#versions = versions;
    this.#totals = parts.map((p) => ({ rows: p.rows, tokens: p.tokens }));
    parts.forEach((p, shard) => {
      for (const [token, n] of Object.entries(p.documentFrequency)) {
        const perShard = this.#df.get(token) ?? new Array<number>(this.#shards).fill(0);
        perShard[shard] = n;
        this.#df.set(token, perShard);
      }
    });
  }

  clear(): void {
    this.#versions = undefined;
    this.#totals = [];
    this.#df = new Map();
  }
}
