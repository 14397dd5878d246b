import type { Chunk } from "@attr-rag/contracts";
import type { ChunkStore } from "../ChunkStore.js";

interface ChunkFields {
  readonly chunkId?: string;
  readonly id?: string;
  readonly docId: string;
  readonly ordinal: number;
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/**
 * Builds proto Chunks, copying each document's title and source into them (one lookup per document per
 * response, cached here).
 */
export function chunkConverter(store: ChunkStore): (c: ChunkFields) => Chunk {
  const docs = new Map<string, { title: string; source: string }>();
  return (c) => {
    let doc = docs.get(c.docId);
    if (doc === undefined) {
      const stored = store.getDocument(c.docId);
      doc = { title: stored?.title ?? "", source: stored?.source ?? "" };
      docs.set(c.docId, doc);
    }
    return { id: c.chunkId ?? c.id ?? "", docId: c.docId, ordinal: c.ordinal, start: c.start, end: c.end, text: c.text, docTitle: doc.title, source: doc.source };
  };
}
