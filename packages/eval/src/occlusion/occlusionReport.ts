// The eval occlusion report: the agreement table and an SVG of agreement against work, one file, no script.
import { escapeHtml, REPORT_CSS } from "@attr-rag/gateway";
import { seriesColour } from "../answers/evalCharts.js";
import type { StrategySummary } from "./occlusionSummary.js";

/** Selection agreement (y) against work relative to exact (x), one dot per approximate strategy; exact at (1, 1). */
export function agreementChart(summaries: readonly StrategySummary[], reference: string): string {
  const W = 520;
  const H = 300;
  const left = 50;
  const top = 30;
  const plotW = W - left - 20;
  const plotH = 200;
  const x = (v: number) => left + Math.min(1, Math.max(0, v)) * plotW;
  const y = (v: number) => top + plotH - Math.min(1, Math.max(0, v)) * plotH;
  const parts = [`<text x="${left}" y="18" font-size="13" font-weight="600">Selection agreement with ${escapeHtml(reference)} against work</text>`];
  for (let t = 0; t <= 4; t++) {
    const v = t / 4;
    parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e5e5"/><text x="${left - 6}" y="${y(v) + 4}" font-size="10" text-anchor="end">${v}</text>`);
    parts.push(`<text x="${x(v)}" y="${top + plotH + 14}" font-size="10" text-anchor="middle">${v}</text>`);
  }
  parts.push(`<text x="${left + plotW / 2}" y="${top + plotH + 30}" font-size="11" text-anchor="middle">tokens evaluated ÷ exact</text>`);
  parts.push(`<text x="12" y="${top + plotH / 2}" font-size="11" transform="rotate(-90 12 ${top + plotH / 2})" text-anchor="middle">same kept sets (fraction of questions)</text>`);
  parts.push(`<circle cx="${x(1)}" cy="${y(1)}" r="5" fill="#000"><title>${escapeHtml(reference)} (exact)</title></circle>`);
  summaries.forEach((s, i) => {
    const label = `${s.strategy}: ${(100 * s.selection_agreement).toFixed(0)} % same selection at ${s.work_ratio.toFixed(2)} × the work`;
    parts.push(`<circle cx="${x(s.work_ratio)}" cy="${y(s.selection_agreement)}" r="5" fill="${seriesColour(i)}"><title>${escapeHtml(label)}</title></circle>`);
    parts.push(`<text x="${x(s.work_ratio) + 8}" y="${y(s.selection_agreement) + 4}" font-size="11">${escapeHtml(s.strategy)}</text>`);
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="60%" role="img" aria-label="selection agreement against work">${parts.join("")}</svg>`;
}

export function renderOcclusionReport(reference: string, summaries: readonly StrategySummary[], facts: Record<string, string>): string {
  const rows = summaries
    .map(
      (s) =>
        `<tr><td>${escapeHtml(s.strategy)} (APPROXIMATE)</td><td>${s.questions}</td><td>${(100 * s.selection_agreement).toFixed(0)} %</td><td>${s.mean_kept_jaccard.toFixed(3)}</td>` +
        `<td>${s.mean_alpha_spearman === null ? "–" : s.mean_alpha_spearman.toFixed(3)}</td><td>${s.work_ratio.toFixed(3)}</td><td>${s.time_ratio.toFixed(3)}</td>` +
        `<td>${s.strategy === "screen" ? `${(100 * s.screened_fraction).toFixed(0)} %` : "–"}</td></tr>`,
    )
    .join("");
  const dl = Object.entries(facts).map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Attr-RAG: approximate occlusion against exact</title><style>${REPORT_CSS}</style></head>
<body>
<h1>Approximate occlusion against exact (${escapeHtml(reference)})</h1>
<dl class="facts">${dl}</dl>
<table class="numeric" id="agreement"><tr><th>strategy</th><th>questions</th><th>same selection</th><th>kept-set Jaccard</th><th>α Spearman</th><th>work ÷ exact</th><th>time ÷ exact</th><th>sets screened</th></tr>${rows}</table>
${agreementChart(summaries, reference)}
</body></html>
`;
}
