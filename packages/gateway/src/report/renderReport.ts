import type { AskEvent } from "@attr-rag/contracts";
import { renderAnswerSection } from "./answerSection.js";
import { renderAttributionSection } from "./attributionSection.js";
import { renderChunkSetsSection } from "./chunkSetsSection.js";
import { escapeHtml } from "./escapeHtml.js";
import { renderGapFillSection } from "./gapFillSection.js";
import { renderHeader } from "./header.js";
import { collectReportData, type ReportData } from "./reportData.js";
import { renderRetrievedSection } from "./retrievedSection.js";
import { renderRunStatsSection } from "./runStatsSection.js";
import { renderSelectionSection } from "./selectionSection.js";
import { renderSentencesSection } from "./sentenceSection.js";
import { REPORT_CSS } from "./styles.js";

export interface ReportInput {
  /** The question as asked. */
  question: string;
  /** The Ask stream of one request, in order. */
  events: readonly AskEvent[];
  /** Shown in the footer; default now. */
  generatedAt?: Date;
}

/**
 * The report's body sections (answer, attribution, selection, sets, retrieval, gap fill, run statistics):
 * what the HTML report and the web console's result page both show, from the one renderer.
 */
export function renderReportSections(data: ReportData): string {
  return [
    renderAnswerSection(data),
    renderSentencesSection(data),
    renderAttributionSection(data),
    renderSelectionSection(data),
    renderChunkSetsSection(data),
    renderRetrievedSection(data),
    renderGapFillSection(data),
    renderRunStatsSection(data),
  ]
    .filter((part) => part !== "")
    .join("\n");
}

// Even though every value is escaped, the policy forbids scripts and any network fetch as a second line of
// defence: the report embeds arbitrary document text and may be opened from anywhere.
const CSP = "default-src 'none'; style-src 'unsafe-inline'";

function timestamp(date: Date): string {
  // toISOString throws on an invalid Date; a report should still render.
  return Number.isNaN(date.getTime()) ? "unknown time" : date.toISOString();
}

/**
 * A self-contained HTML5 page explaining one Attr-RAG request: what was retrieved, how the sets were
 * re-ranked, every α, why each set was kept or dropped, and the cited answer. Missing stages (baselines,
 * streams that stopped early) are rendered as "not available" instead of failing.
 */
export function renderReport(input: ReportInput): string {
  const data = collectReportData(input.events);
  const generatedAt = timestamp(input.generatedAt ?? new Date());
  const body = [
    renderHeader(input.question, data),
    "<main>",
    renderReportSections(data),
    "</main>",
    `<footer>Attr-RAG report · request ${escapeHtml(data.requestId ?? "not available")} · generated ${escapeHtml(generatedAt)} · ${input.events.length} events</footer>`,
  ].filter((part) => part !== "");
  return [
    "<!DOCTYPE html>",
    `<html lang="en">`,
    "<head>",
    `<meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>Attr-RAG report: ${escapeHtml(input.question)}</title>`,
    `<style>${REPORT_CSS}</style>`,
    "</head>",
    "<body>",
    ...body,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
