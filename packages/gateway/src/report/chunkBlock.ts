import type { Chunk, ChunkSetMember } from "@attr-rag/contracts";
import { escapeHtml } from "./escapeHtml.js";
import { notAvailable } from "./html.js";

/** One chunk with its ids and text, as shown inside sets, gap fill and the baseline's retrieval list. */
export function renderChunk(id: string, member: ChunkSetMember | undefined, chunk: Chunk | undefined, extraMeta: readonly string[] = []): string {
  const meta = [`<code>${escapeHtml(id)}</code>`];
  const ordinal = member?.ordinal ?? chunk?.ordinal;
  if (ordinal !== undefined) meta.push(`ordinal ${ordinal}`);
  if (member?.retrievalRank !== undefined) meta.push(`retrieval rank ${member.retrievalRank}`);
  meta.push(...extraMeta.map(escapeHtml));
  const text = chunk ? `<div class="chunk-text">${escapeHtml(chunk.text)}</div>` : notAvailable("chunk text");
  return `<div class="chunk" data-chunk="${escapeHtml(id)}">\n<div class="chunk-meta">${meta.join(" · ")}</div>\n${text}\n</div>`;
}
