import Database from "better-sqlite3";
import type { SearchFilters, SearchHit } from "../types.js";
import type { Bm25Corpus } from "./bm25Corpus.js";
import { Bm25Search } from "./bm25Search.js";
import { Bm25TopK } from "./bm25TopK.js";

/** A read-only BM25 searcher over a store's SQLite file: what each BM25 search thread runs (Bm25Pool). */
export function openBm25Reader(sqlitePath: string): {
  search(query: string, k: number, filters: SearchFilters, method: "topk" | "exhaustive", corpus?: Bm25Corpus): SearchHit[];
  /** search, with the store's applied ingest log sequence read in the same read transaction (one snapshot). */
  searchAtVersion(query: string, k: number, filters: SearchFilters, method: "topk" | "exhaustive", corpus?: Bm25Corpus): { hits: SearchHit[]; version: number };
} {
  const db = new Database(sqlitePath, { readonly: true, fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  const exhaustive = new Bm25Search(db);
  const topk = new Bm25TopK(db, exhaustive);
  const applied = db.prepare("SELECT value FROM meta WHERE key = 'ingest_log_applied'").pluck();
  const search = (query: string, k: number, filters: SearchFilters, method: "topk" | "exhaustive", corpus?: Bm25Corpus) =>
    method === "exhaustive" ? exhaustive.search(query, k, filters) : topk.search(query, k, filters, corpus);
  const atVersion = db.transaction((query: string, k: number, filters: SearchFilters, method: "topk" | "exhaustive", corpus?: Bm25Corpus) => ({
    version: Number(applied.get() ?? 0),
    hits: search(query, k, filters, method, corpus),
  }));
  return { search, searchAtVersion: (query, k, filters, method, corpus) => atVersion(query, k, filters, method, corpus) };
}
