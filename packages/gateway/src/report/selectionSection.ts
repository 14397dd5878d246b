import type { SelectionExplanation, SelectionParams } from "@attr-rag/contracts";
import { SelectionDecision } from "@attr-rag/contracts";
import { selectionFlagLabel } from "./enumLabels.js";
import { escapeHtml } from "./escapeHtml.js";
import { formatAlpha, formatFixed } from "./formatNumber.js";
import { decisionBadge, facts, notAvailable, section, table } from "./html.js";
import { metricName } from "./metricStyle.js";
import { baselineKind, type ReportData } from "./reportData.js";

function paramFacts(p: SelectionParams | undefined): [string, string][] {
  if (!p) return [["parameters", "not available"]];
  const opt = (v: number | undefined, digits: number) => (v === undefined ? "default" : formatFixed(v, digits));
  return [
    ["τ (min largest drop)", opt(p.tau, 3)],
    ["min votes", opt(p.minVotes, 0)],
    ["ε (context ignored below)", opt(p.epsilon, 3)],
    ["max sets", p.maxSets === undefined ? "unlimited" : String(p.maxSets)],
    ["token budget", p.tokenBudget === undefined ? "unlimited" : String(p.tokenBudget)],
    ["max gap", opt(p.maxGap, 0)],
  ];
}

function decisionsTable(s: SelectionExplanation): string {
  const metricCount = s.params?.metrics.length || s.cuts.length;
  const rows = s.sets.map((e) => {
    const decided = e.decision === SelectionDecision.SELECTION_DECISION_UNSPECIFIED ? undefined : e.decision === SelectionDecision.SELECTION_DECISION_KEPT;
    const best = e.setId === s.bestSetId ? ` <span class="badge best">S*</span>` : "";
    return {
      className: decided === undefined ? undefined : decided ? "kept" : "dropped",
      cellsHtml: [
        String(e.setIndex + 1),
        `<code>${escapeHtml(e.setId)}</code>${best}`,
        decisionBadge(decided),
        escapeHtml(e.reasonText || "(no reason given)"),
        escapeHtml(metricCount ? `${e.votes} of ${metricCount}` : String(e.votes)),
        String(e.argmaxVotes),
        formatAlpha(e.meanAlpha),
      ],
    };
  });
  return table(["re-rank #", "set", "decision", "reason", "votes", "argmax votes", "mean α"], rows, "numeric");
}

function cutsTable(s: SelectionExplanation): string {
  if (s.cuts.length === 0) return "";
  const rows = s.cuts.map((c) => ({
    cellsHtml: [
      escapeHtml(metricName(c.metric)),
      formatAlpha(c.largestDrop),
      c.aboveTau ? "yes" : "no",
      String(c.setsAbove),
      `<code>${escapeHtml(c.argmaxSetId)}</code>`,
    ],
  }));
  return `<h3>Where each metric cut</h3>\n${table(["metric", "largest drop", "> τ", "sets above", "argmax set"], rows, "numeric")}`;
}

export function renderSelectionSection(data: ReportData): string {
  const s = data.selection;
  if (!s) {
    const body = baselineKind(data) ? `<p class="note">baseline run: no selection</p>` : notAvailable("selection");
    return section("selection", "Selection", body);
  }
  const flags = s.flags.length
    ? `<ul class="flags">${s.flags.map((f) => `<li>${escapeHtml(selectionFlagLabel(f))}</li>`).join("")}</ul>`
    : `<p class="muted">no flags</p>`;
  return section(
    "selection",
    "Selection",
    [
      s.summary ? `<p class="summary">${escapeHtml(s.summary)}</p>` : notAvailable("selection summary"),
      decisionsTable(s),
      "<h3>Flags</h3>",
      flags,
      cutsTable(s),
      "<h3>Parameters</h3>",
      facts([["best set S*", s.bestSetId || "none"], ...paramFacts(s.params)]),
    ].join("\n"),
  );
}
