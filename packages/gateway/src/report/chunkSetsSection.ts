import type { Chunk, ChunkSet, ChunkSetMember, RerankedSet } from "@attr-rag/contracts";
import { renderChunk } from "./chunkBlock.js";
import { escapeHtml } from "./escapeHtml.js";
import { formatFixed } from "./formatNumber.js";
import { decisionBadge, notAvailable, section } from "./html.js";
import { isKept, type ReportData } from "./reportData.js";

interface SetView {
  readonly setId: string;
  readonly set: ChunkSet | undefined;
  /** 1-based position after re-ranking. */
  readonly rerankPosition: number | undefined;
  readonly rerank: RerankedSet | undefined;
  readonly kept: boolean | undefined;
}

function setViews(data: ReportData): SetView[] {
  const aligned = data.aligned?.sets ?? [];
  const byId = new Map(aligned.map((s) => [s.setId, s]));
  const views: SetView[] = [];
  const seen = new Set<string>();
  const add = (setId: string, rerank: RerankedSet | undefined, position: number | undefined) => {
    if (seen.has(setId)) return;
    seen.add(setId);
    views.push({ setId, set: byId.get(setId), rerankPosition: position, rerank, kept: isKept(data, setId) });
  };
  data.reranked?.sets.forEach((r, i) => add(r.setId, r, i + 1));
  for (const s of aligned) add(s.setId, undefined, undefined);
  // Kept sets first because they are what the answer was built from; the sort is stable, so re-rank order
  // is preserved inside each group.
  const order = (v: SetView) => (v.kept === true ? 0 : v.kept === false ? 1 : 2);
  return views.sort((a, b) => order(a) - order(b));
}

/**
 * Members carry ids only; their text comes from retrieval. A RERANK baseline has no aligned event and one set
 * per chunk, so its set id is matched against the chunk id and the gateway's "<doc_id>:<first>-<last>" form.
 */
function memberChunks(data: ReportData, view: SetView): { member: ChunkSetMember | undefined; id: string; chunk: Chunk | undefined }[] {
  if (view.set) return view.set.chunks.map((m) => ({ member: m, id: m.chunkId, chunk: data.chunks.get(m.chunkId) }));
  const direct = data.chunks.get(view.setId);
  if (direct) return [{ member: undefined, id: direct.id, chunk: direct }];
  for (const chunk of data.chunks.values()) {
    if (`${chunk.docId}:${chunk.ordinal}-${chunk.ordinal}` === view.setId) return [{ member: undefined, id: chunk.id, chunk }];
  }
  return [];
}

function renderSet(data: ReportData, view: SetView): string {
  const members = memberChunks(data, view);
  const first = members.find((m) => m.chunk)?.chunk;
  const meta: string[] = [];
  const docId = view.set?.docId ?? first?.docId;
  if (docId !== undefined) {
    const title = first?.docTitle ? ` “${escapeHtml(first.docTitle)}”` : "";
    meta.push(`document <code>${escapeHtml(docId)}</code>${title}`);
  }
  if (view.set) {
    const { firstOrdinal: a, lastOrdinal: b } = view.set;
    meta.push(a === b ? `chunk ${a}` : `chunks ${a}–${b}`);
  }
  if (view.rerankPosition !== undefined && view.rerank) {
    meta.push(`re-rank #${view.rerankPosition} (score ${formatFixed(view.rerank.score, 3)}, aligned #${view.rerank.alignedIndex + 1})`);
  } else {
    meta.push("re-rank position not available");
  }
  if (view.set) meta.push(`best retrieval rank ${view.set.bestRetrievalRank}`);
  if (view.set?.tokenCount !== undefined) meta.push(`${view.set.tokenCount} tokens`);

  const reason = data.setSelections.get(view.setId)?.reasonText;
  const cls = view.kept === true ? "set kept" : view.kept === false ? "set dropped" : "set";
  const chunksHtml = members.length ? members.map((m) => renderChunk(m.id, m.member, m.chunk)).join("\n") : notAvailable("member chunks");
  return [
    `<article class="${cls}" data-set="${escapeHtml(view.setId)}">`,
    `<h3><code>${escapeHtml(view.setId)}</code> ${decisionBadge(view.kept)}</h3>`,
    `<p class="meta">${meta.join(" · ")}</p>`,
    reason ? `<p class="reason">${escapeHtml(reason)}</p>` : "",
    chunksHtml,
    "</article>",
  ].join("\n");
}

export function renderChunkSetsSection(data: ReportData): string {
  const views = setViews(data);
  if (views.length === 0) return section("sets", "Chunk sets", notAvailable("chunk sets"));
  const intro = data.selection
    ? `<p class="muted">kept sets first, then dropped ones; re-rank order inside each group</p>`
    : `<p class="muted">in re-rank order</p>`;
  return section("sets", "Chunk sets", [intro, ...views.map((v) => renderSet(data, v))].join("\n"));
}
