/**
 * The store's errors. `name` says which kind (the gRPC layer maps kinds to status codes later); the
 * message says what went wrong and what to do about it. Every error thrown before a write commits
 * leaves the store untouched.
 */
export class StoreError extends Error {
  override name = "StoreError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The store directory (or its `store.sqlite`) does not exist and `create` was not set. */
export class StoreNotFoundError extends StoreError {
  override name = "StoreNotFoundError";
}

/** Another live process (or another handle in this process) has the store open. */
export class StoreLockedError extends StoreError {
  override name = "StoreLockedError";
}

/** The store was used after `close()`. */
export class StoreClosedError extends StoreError {
  override name = "StoreClosedError";
  constructor(what: string) {
    super(`${what}: the store is closed; open it again with ChunkStore.open()`);
  }
}

/** The store was built by another embedder (id or dimensions differ) than the one supplied. */
export class EmbedderMismatchError extends StoreError {
  override name = "EmbedderMismatchError";
  constructor(
    readonly stored: { readonly id: string; readonly dimensions: number },
    readonly supplied: { readonly id: string; readonly dimensions: number },
    storePath: string,
  ) {
    super(
      `store ${storePath} was built by embedder "${stored.id}" (${stored.dimensions} dimensions) but was opened with ` +
        `"${supplied.id}" (${supplied.dimensions} dimensions); vectors from different embedders are not comparable. ` +
        `Open it with embedder "${stored.id}", or ingest into a new store.`,
    );
  }
}

/** The caller asked an existing store for a setting fixed at its creation (chunker, vector type) with another value. */
export class StoreConfigMismatchError extends StoreError {
  override name = "StoreConfigMismatchError";
}

/** A search argument is malformed: empty query, k out of range, wrong vector length, bad filter. */
export class InvalidQueryError extends StoreError {
  override name = "InvalidQueryError";
}

/** A document to ingest is malformed (missing id, empty text, non-string fields); nothing was stored. */
export class InvalidDocumentError extends StoreError {
  override name = "InvalidDocumentError";
}

/** The named document is not in the store (NOT_FOUND). */
export class DocumentNotFoundError extends StoreError {
  override name = "DocumentNotFoundError";
  constructor(readonly docId: string, what: string) {
    super(`${what}: document "${docId}" is not in the store`);
  }
}

/** The embed function failed or returned vectors of the wrong count, length or values; nothing was stored. */
export class EmbeddingError extends StoreError {
  override name = "EmbeddingError";
}

/**
 * Some chunks have no vector yet (the store was opened without an embed function after a crash), so a
 * dense ranking would silently miss them. BM25 search still works.
 */
export class VectorsIncompleteError extends StoreError {
  override name = "VectorsIncompleteError";
}

/**
 * A source file could not be turned into documents: unreadable (`code` is the errno code), over the size
 * limit, invalid UTF-8, bad JSON on a line, a PDF without a text layer. `file` names it; nothing of the
 * failing document reached the store.
 */
export class DocumentReadError extends StoreError {
  override name = "DocumentReadError";
  constructor(
    readonly file: string,
    message: string,
    options?: { cause?: unknown; code?: string },
  ) {
    super(`${file}: ${message}`, options);
    this.code = options?.code;
  }
  readonly code: string | undefined;
}
