import { attributionMethodLabel, retrievalModeLabel } from "./enumLabels.js";
import { escapeHtml } from "./escapeHtml.js";
import { facts } from "./html.js";
import { baselineKind, type ReportData } from "./reportData.js";

export const FALLBACK_WARNING = "re-ranked with the bi-encoder fallback (no cross-encoder configured)";
export const BASELINE_NOTE = "baseline run: no attribution";

const NA = "not available";

function pipelineLabel(data: ReportData): string {
  switch (baselineKind(data)) {
    case "topk":
      return "baseline: vanilla RAG (top-k retrieved chunks)";
    case "rerank":
      return "baseline: re-ranked RAG (top-k chunks after cross-encoder re-ranking)";
    default:
      return "Attr-RAG";
  }
}

function retrievalLabel(data: ReportData): string {
  const r = data.retrieved;
  if (!r) return NA;
  const embedder = r.embedder ? `, embedder ${r.embedder}` : "";
  return `${retrievalModeLabel(r.mode)}${embedder}, ${r.chunks.length} chunks`;
}

function attributionLabel(data: ReportData): string {
  const a = data.attribution;
  if (!a) return baselineKind(data) ? "none (baseline)" : NA;
  return `${attributionMethodLabel(a.method)}, ${a.evaluations} evaluations`;
}

export function renderHeader(question: string, data: ReportData): string {
  const notes: string[] = [];
  // The fallback changes which sets reach attribution at all, so it is shown where the reader starts.
  if (data.reranked?.fallback) notes.push(`<p class="warn">⚠ ${escapeHtml(FALLBACK_WARNING)}</p>`);
  if (baselineKind(data)) notes.push(`<p class="note">${escapeHtml(BASELINE_NOTE)}</p>`);
  if (!data.done) {
    notes.push(`<p class="warn">⚠ the stream has no done event: the request did not finish; sections show what arrived</p>`);
  }
  return [
    "<header>",
    "<h1>Attr-RAG report</h1>",
    `<p class="question">${escapeHtml(question)}</p>`,
    facts([
      ["request id", data.requestId ?? NA],
      ["pipeline", pipelineLabel(data)],
      ["retrieval", retrievalLabel(data)],
      ["re-ranker", data.reranked ? data.reranked.reranker || "(unnamed)" : NA],
      ["attribution", attributionLabel(data)],
    ]),
    ...notes,
    "</header>",
  ].join("\n");
}
