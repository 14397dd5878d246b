/**
 * A chunk of a document. `ordinal` is the chunk's position in its document (0-based, no gaps), and
 * `[start, end)` are offsets into the document text in UTF-16 code units (JavaScript string indices),
 * so `documentText.slice(start, end) === text` always holds.
 */
export interface Chunk {
  /** Stable id: the same document text and splitter options always give the same ids. */
  readonly id: string;
  readonly docId: string;
  readonly ordinal: number;
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

/** Chunk ids are `<docId>#<ordinal>`: readable in citations and stable across re-ingestion. */
export function chunkId(docId: string, ordinal: number): string {
  return `${docId}#${ordinal}`;
}
