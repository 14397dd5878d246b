import { createHash } from "node:crypto";
import type { ChunkerOptions } from "@attr-rag/core";

/**
 * `sha256:<hex>` of the chunker options and the text: the same text chunked differently gives different
 * chunks, so it must not count as unchanged. Title, source and license are not part of it (changing them
 * rewrites only the document row).
 */
export function contentHash(text: string, chunker: Required<ChunkerOptions>): string {
  const hash = createHash("sha256");
  hash.update(JSON.stringify({ maxChars: chunker.maxChars, overlapChars: chunker.overlapChars }));
  hash.update("\n");
  hash.update(text);
  return `sha256:${hash.digest("hex")}`;
}
