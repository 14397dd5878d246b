import Database from "better-sqlite3";
import type { SearchFilters, SearchHit } from "../types.js";
import type { Bm25Corpus } from "./bm25Corpus.js";
import { Bm25Search } from "./bm25Search.js";
import { Bm25TopK } from "./bm25TopK.js";

/** A read-only BM25 searcher over a store's SQLite file: what each BM25 search thread runs (Bm25Pool). */
export function openBm25Reader(sqlitePath: string): { search(query: string, k: number, filters: SearchFilters, method: "topk" | "exhaustive", corpus?: Bm25Corpus): SearchHit[] } {
  const db = new Database(sqlitePath, { readonly: true, fileMustExist: true });
  db.pragma("busy_timeout = 5000");
  const exhaustive = new Bm25Search(db);
  const topk = new Bm25TopK(db, exhaustive);
  return { search: (query, k, filters, method, corpus) => (method === "exhaustive" ? exhaustive.search(query, k, filters) : topk.search(query, k, filters, corpus)) };
}
