import { MAX_K, MAX_QUERY_CHARS } from "../search/searchOptions.js";

/** Input limits of the gRPC IndexService; each breach is a precise status, never a silent cut. */
export interface IndexServiceLimits {
  /** Longest query in characters (INVALID_ARGUMENT beyond). At most MAX_QUERY_CHARS. */
  readonly maxQueryChars: number;
  /** Largest k (INVALID_ARGUMENT beyond). At most MAX_K. */
  readonly maxK: number;
  /** k when the request leaves it unset (the proto's default, 30). */
  readonly defaultK: number;
  /** Documents one IngestDocuments stream may carry (RESOURCE_EXHAUSTED beyond). */
  readonly maxDocumentsPerStream: number;
  /** UTF-8 bytes of one document's text; a larger document is reported FAILED, the stream goes on. */
  readonly maxDocumentBytes: number;
  /** Ranges in one GetChunks request (INVALID_ARGUMENT beyond). */
  readonly maxChunkRanges: number;
  /** Chunks in one GetChunks response (RESOURCE_EXHAUSTED beyond). */
  readonly maxChunksPerResponse: number;
  /** Texts in one EmbedTexts request (INVALID_ARGUMENT beyond); their bytes count against maxDocumentBytes. */
  readonly maxEmbedTexts: number;
}

export const DEFAULT_INDEX_SERVICE_LIMITS: IndexServiceLimits = Object.freeze({
  maxQueryChars: MAX_QUERY_CHARS,
  maxK: MAX_K,
  defaultK: 30,
  maxDocumentsPerStream: 100_000,
  maxDocumentBytes: 32 * 1024 * 1024,
  maxChunkRanges: 1_000,
  maxChunksPerResponse: 10_000,
  maxEmbedTexts: 4_096,
});

/** Room for a document's title, source, license and metadata on top of its text in one gRPC message. */
export const MESSAGE_OVERHEAD_BYTES = 1024 * 1024;

const CEILINGS: Partial<Record<keyof IndexServiceLimits, number>> = { maxQueryChars: MAX_QUERY_CHARS, maxK: MAX_K };

/** Fills in defaults and rejects limits that are not positive integers or exceed what the store accepts. */
export function resolveLimits(limits: Partial<IndexServiceLimits> = {}): IndexServiceLimits {
  const resolved = { ...DEFAULT_INDEX_SERVICE_LIMITS, ...limits };
  for (const [name, value] of Object.entries(resolved) as [keyof IndexServiceLimits, number][]) {
    const ceiling = CEILINGS[name] ?? Number.MAX_SAFE_INTEGER;
    if (!Number.isSafeInteger(value) || value < 1 || value > ceiling) {
      throw new RangeError(`index service limit ${name} must be an integer from 1 to ${ceiling}, got ${String(value)}`);
    }
  }
  if (resolved.defaultK > resolved.maxK) throw new RangeError(`index service limit defaultK (${resolved.defaultK}) exceeds maxK (${resolved.maxK})`);
  return Object.freeze(resolved);
}
