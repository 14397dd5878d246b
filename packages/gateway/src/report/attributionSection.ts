import type { AttributionMetric, MetricScore, SetAttribution } from "@attr-rag/contracts";
import { renderAlphaChart } from "./alphaChart.js";
import { attributionMethodLabel } from "./enumLabels.js";
import { escapeHtml } from "./escapeHtml.js";
import { formatAlpha, formatFixed } from "./formatNumber.js";
import { BASELINE_NOTE } from "./header.js";
import { decisionBadge, facts, notAvailable, section, table } from "./html.js";
import { metricName } from "./metricStyle.js";
import { baselineKind, isKept, type ReportData } from "./reportData.js";

function alphaCell(data: ReportData, row: SetAttribution, metric: AttributionMetric): string {
  const score: MetricScore | undefined = row.scores.find((s) => s.metric === metric);
  if (score === undefined) return `<span class="na">n/a</span>`;
  const text = formatAlpha(score.alpha) + (score.stdError === undefined ? "" : ` ± ${formatAlpha(score.stdError)}`);
  // Showing which metric voted for the set ties the numbers to the selection decision next to them.
  const vote = data.setSelections.get(row.setId)?.metricVotes.find((v) => v.metric === metric);
  if (vote === undefined) return escapeHtml(text);
  const title = `rank ${vote.rank}, drop to next ${formatAlpha(vote.dropToNext)}${vote.voted ? ", voted" : ""}${vote.argmax ? ", argmax" : ""}`;
  const cls = [vote.voted ? "voted" : "", vote.argmax ? "argmax" : ""].filter(Boolean).join(" ");
  return `<span class="${cls || "not-voted"}" title="${escapeHtml(title)}">${escapeHtml(text)}${vote.voted ? " ✓" : ""}</span>`;
}

export function renderAttributionSection(data: ReportData): string {
  const a = data.attribution;
  if (!a) {
    const body = baselineKind(data) ? `<p class="note">${escapeHtml(BASELINE_NOTE)}</p>` : notAvailable("attribution");
    return section("attribution", "Attribution", body);
  }
  if (a.rows.length === 0 || a.metrics.length === 0) {
    return section("attribution", "Attribution", `<p class="muted">the attribution table is empty (no sets or no metrics)</p>`);
  }

  const hasLoglikWithout = a.rows.some((r) => r.loglikWithout !== undefined);
  const headers = ["#", "set", "decision", ...a.metrics.map(metricName), ...(hasLoglikWithout ? ["v(without set)"] : [])];
  const rows = a.rows.map((row, i) => ({
    className: isKept(data, row.setId) ? "kept" : undefined,
    cellsHtml: [
      String(i + 1),
      `<code>${escapeHtml(row.setId)}</code>`,
      decisionBadge(isKept(data, row.setId)),
      ...a.metrics.map((m) => alphaCell(data, row, m)),
      ...(hasLoglikWithout ? [escapeHtml(formatFixed(row.loglikWithout, 3))] : []),
    ],
  }));

  const info: [string, string][] = [
    ["method", attributionMethodLabel(a.method)],
    ["utility evaluations", String(a.evaluations)],
  ];
  if (a.loglikFull !== undefined) info.push(["v(all sets)", formatFixed(a.loglikFull, 3)]);
  if (a.loglikEmpty !== undefined) info.push(["v(no sets)", formatFixed(a.loglikEmpty, 3)]);

  return section(
    "attribution",
    "Attribution",
    [
      facts(info),
      `<p class="muted">sets in re-rank order; ✓ marks the metrics that voted for a set (hover a value for its rank and drop)</p>`,
      `<div class="chart">${renderAlphaChart(a, (id) => isKept(data, id))}</div>`,
      table(headers, rows, "numeric"),
    ].join("\n"),
  );
}
