import type { Chunk } from "@attr-rag/core";
import type { StoredDocument } from "../types.js";
import type { Db } from "./openDatabase.js";
import { ChunkTermCounts } from "./chunkTermCounts.js";

interface DocumentRow {
  id: string;
  title: string | null;
  source: string | null;
  license: string | null;
  content_hash: string;
  text_length: number;
  chunk_count: number;
  ingested_at: string;
}

export interface NewDocument {
  readonly id: string;
  readonly title?: string | undefined;
  readonly source?: string | undefined;
  readonly license?: string | undefined;
  readonly contentHash: string;
  readonly textLength: number;
  /** When the write happened (ISO 8601); now when absent. */
  readonly ingestedAt?: string | undefined;
}

/**
 * Row-level access to `documents` and `chunks`, with the statements prepared once. No transactions here:
 * the caller decides what must be atomic.
 */
export class DocumentRows {
  readonly #get;
  readonly #chunkKeys;
  readonly #insertDoc;
  readonly #insertChunk;
  readonly #deleteDoc;
  readonly #updateMeta;
  readonly #range;
  readonly #counts;
  readonly #terms: ChunkTermCounts;

  constructor(db: Db) {
    this.#terms = new ChunkTermCounts(db);
    this.#get = db.prepare<[string], DocumentRow>("SELECT * FROM documents WHERE id = ?");
    this.#chunkKeys = db.prepare<[string], { rowid: number }>("SELECT rowid FROM chunks WHERE doc_id = ? ORDER BY ordinal");
    this.#insertDoc = db.prepare(
      `INSERT INTO documents (id, title, source, license, content_hash, text_length, chunk_count, ingested_at)
       VALUES (@id, @title, @source, @license, @contentHash, @textLength, @chunkCount, @ingestedAt)`,
    );
    this.#insertChunk = db.prepare(
      `INSERT INTO chunks (id, doc_id, ordinal, start, "end", text) VALUES (@id, @docId, @ordinal, @start, @end, @text)`,
    );
    this.#deleteDoc = db.prepare("DELETE FROM documents WHERE id = ?");
    this.#updateMeta = db.prepare("UPDATE documents SET title = @title, source = @source, license = @license WHERE id = @id");
    this.#range = db.prepare<[string, number, number], Chunk>(
      `SELECT id, doc_id AS docId, ordinal, start, "end", text FROM chunks
       WHERE doc_id = ? AND ordinal BETWEEN ? AND ? ORDER BY ordinal`,
    );
    this.#counts = db.prepare<[], { documents: number; chunks: number }>(
      "SELECT (SELECT count(*) FROM documents) AS documents, (SELECT count(*) FROM chunks) AS chunks",
    );
  }

  get(id: string): StoredDocument | undefined {
    const row = this.#get.get(id);
    return row && toStoredDocument(row);
  }

  /** Rowids (= vector keys) of a document's chunks. */
  chunkKeys(docId: string): number[] {
    return this.#chunkKeys.all(docId).map((r) => r.rowid);
  }

  /**
   * Inserts documents and their chunks; returns each document's chunk rowids in ordinal order. The chunks'
   * token counts are recorded once for all of them: a term shared by many documents is one write, not one each.
   */
  insertAll(docs: readonly { doc: NewDocument; chunks: readonly Chunk[] }[]): number[][] {
    const keys = docs.map(({ doc, chunks }) => this.#insertRows(doc, chunks));
    this.#terms.add(docs.flatMap(({ chunks }, d) => keys[d]!.map((rowid, i) => ({ rowid, text: chunks[i]!.text }))));
    return keys;
  }

  #insertRows(doc: NewDocument, chunks: readonly Chunk[]): number[] {
    this.#insertDoc.run({
      id: doc.id,
      title: doc.title ?? null,
      source: doc.source ?? null,
      license: doc.license ?? null,
      contentHash: doc.contentHash,
      textLength: doc.textLength,
      chunkCount: chunks.length,
      ingestedAt: doc.ingestedAt ?? new Date().toISOString(),
    });
    return chunks.map((c) => Number(this.#insertChunk.run({ id: c.id, docId: doc.id, ordinal: c.ordinal, start: c.start, end: c.end, text: c.text }).lastInsertRowid));
  }

  /** Deletes the document; chunks, FTS rows and vector bookkeeping follow by cascade and triggers. */
  delete(id: string): boolean {
    this.#terms.remove(this.chunkKeys(id));
    return this.#deleteDoc.run(id).changes > 0;
  }

  updateMetadata(doc: Pick<NewDocument, "id" | "title" | "source" | "license">): void {
    this.#updateMeta.run({ id: doc.id, title: doc.title ?? null, source: doc.source ?? null, license: doc.license ?? null });
  }

  /** Chunks of one document with first ≤ ordinal ≤ last, in order. */
  range(docId: string, first: number, last: number): Chunk[] {
    return this.#range.all(docId, first, last);
  }

  counts(): { documents: number; chunks: number } {
    return this.#counts.get()!;
  }
}

function toStoredDocument(row: DocumentRow): StoredDocument {
  return {
    id: row.id,
    title: row.title ?? undefined,
    source: row.source ?? undefined,
    license: row.license ?? undefined,
    contentHash: row.content_hash,
    textLength: row.text_length,
    chunkCount: row.chunk_count,
    ingestedAt: row.ingested_at,
  };
}
