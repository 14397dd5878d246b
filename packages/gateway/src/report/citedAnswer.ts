import { CitationKind, type Citation } from "@attr-rag/contracts";
import { escapeHtml } from "./escapeHtml.js";
import { formatFixed } from "./formatNumber.js";

function citationTitle(c: Citation): string {
  const how =
    c.kind === CitationKind.CITATION_KIND_SIMILARITY
      ? `matched by similarity${c.score === undefined ? "" : ` ${formatFixed(c.score, 3)}`}`
      : c.kind === CitationKind.CITATION_KIND_MARKER
        ? "cited by the model"
        : c.kind === CitationKind.CITATION_KIND_ATTRIBUTION
          ? `attribution: ${c.score === undefined ? "" : `${formatFixed(c.score, 2)} nats `}lost without it`
          : "citation";
  return `${how}: ${c.chunkIds.join(", ")}`;
}

/** Citations of the same span (an ATTRIBUTION and a SIMILARITY one of one sentence) shown as one mark. */
function mergeSameSpan(citations: readonly Citation[]): { start: number; end: number; chunkIds: string[]; title: string }[] {
  const bySpan = new Map<string, { start: number; end: number; chunkIds: string[]; titles: string[] }>();
  for (const c of citations) {
    const key = `${c.start}:${c.end}`;
    const entry = bySpan.get(key) ?? { start: c.start, end: c.end, chunkIds: [], titles: [] };
    for (const id of c.chunkIds) if (!entry.chunkIds.includes(id)) entry.chunkIds.push(id);
    entry.titles.push(citationTitle(c));
    bySpan.set(key, entry);
  }
  return [...bySpan.values()].map((e) => ({ start: e.start, end: e.end, chunkIds: e.chunkIds, title: e.titles.join("; ") }));
}

/**
 * The answer text with each cited span wrapped in <mark> and followed by its chunk ids. Offsets are UTF-16
 * code units, which is what String.prototype.slice counts, so they apply directly. Spans are expected in
 * text order without overlap; an overlapping or out-of-range span is clipped rather than dropped so its
 * chunk ids stay visible.
 */
export function renderCitedText(text: string, citations: readonly Citation[]): string {
  const ordered = mergeSameSpan(citations).sort((a, b) => a.start - b.start || a.end - b.end);
  let out = "";
  let cursor = 0;
  for (const c of ordered) {
    const start = Math.min(Math.max(c.start, cursor), text.length);
    const end = Math.min(Math.max(c.end, start), text.length);
    if (end <= start) continue;
    const ids = c.chunkIds.map(escapeHtml);
    out += escapeHtml(text.slice(cursor, start));
    out += `<mark class="cite" data-chunks="${ids.join(" ")}" title="${escapeHtml(c.title)}">`;
    out += `${escapeHtml(text.slice(start, end))}</mark>`;
    out += `<sup class="cite-ids">[${ids.join(", ")}]</sup>`;
    cursor = end;
  }
  return out + escapeHtml(text.slice(cursor));
}
