import { InvalidQueryError } from "../errors.js";
import type { Bm25Corpus } from "./bm25Corpus.js";
import type { SearchFilters } from "../types.js";

export const MAX_K = 10_000;
/** Longer "queries" are documents pasted by mistake; FTS5 would OR thousands of terms. */
export const MAX_QUERY_CHARS = 10_000;

export function validateK(k: unknown, what: string, name = "k"): number {
  if (typeof k !== "number" || !Number.isInteger(k) || k < 1 || k > MAX_K) {
    throw new InvalidQueryError(`${what}: ${name} must be an integer from 1 to ${MAX_K}, got ${String(k)}`);
  }
  return k;
}

export function validateQueryText(query: unknown, what: string): string {
  if (typeof query !== "string" || query.trim().length === 0) {
    throw new InvalidQueryError(`${what}: the query is empty; pass the question text`);
  }
  if (query.length > MAX_QUERY_CHARS) {
    throw new InvalidQueryError(`${what}: the query has ${query.length} characters, more than the limit of ${MAX_QUERY_CHARS}; shorten it`);
  }
  return query;
}

/** A query vector must come from the store's embedder: same length, finite, not all zeros. */
export function validateQueryVector(vector: unknown, dimensions: number, embedderId: string, what: string): Float32Array {
  if (!(vector instanceof Float32Array)) throw new InvalidQueryError(`${what}: the query vector must be a Float32Array`);
  if (vector.length !== dimensions) {
    throw new InvalidQueryError(
      `${what}: the query vector has ${vector.length} dimensions but the store's embedder "${embedderId}" has ${dimensions}; ` +
        `embed the query with "${embedderId}"`,
    );
  }
  let norm = 0;
  for (const x of vector) {
    if (!Number.isFinite(x)) throw new InvalidQueryError(`${what}: the query vector contains a non-finite value`);
    norm += x * x;
  }
  if (norm === 0) throw new InvalidQueryError(`${what}: the query vector is all zeros; cosine similarity is undefined for it`);
  return vector;
}

export function validateFilters(filters: SearchFilters, what: string): SearchFilters {
  for (const field of ["docIds", "sources"] as const) {
    const list = filters[field];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.some((v) => typeof v !== "string")) {
      throw new InvalidQueryError(`${what}: ${field} must be an array of strings when given`);
    }
  }
  return filters;
}

/** Corpus statistics given to a search (a sharded index's sums): whole numbers, at least as many rows as a term's frequency. */
export function validateCorpus(corpus: unknown, what: string): Bm25Corpus {
  const bad = (message: string) => new InvalidQueryError(`${what}: corpus ${message}`);
  if (corpus === null || typeof corpus !== "object") throw bad("must be { rows, tokens, df }");
  const { rows, tokens, df } = corpus as Record<string, unknown>;
  const count = (x: unknown) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
  if (!count(rows) || !count(tokens)) throw bad(`rows and tokens must be whole numbers ≥ 0, got ${String(rows)} and ${String(tokens)}`);
  if (df === null || typeof df !== "object") throw bad("df must map tokens to document frequencies");
  for (const [token, n] of Object.entries(df)) {
    if (!count(n) || (n as number) > (rows as number)) throw bad(`df[${JSON.stringify(token)}] must be a whole number from 0 to rows (${String(rows)}), got ${String(n)}`);
  }
  return corpus as Bm25Corpus;
}
