// `eval answers --report`: Table I and Table II as HTML tables, their charts, and Fig. 1's curves, in one file.
import { ANSWER_METRICS, JUDGE_CRITERIA } from "@attr-rag/core";
import { escapeHtml, REPORT_CSS } from "@attr-rag/gateway";
import { metricLabel, type AnswersSummary } from "./answersSummary.js";
import { intervalChart, lineChart } from "./evalCharts.js";
import { DIAGNOSTIC_KS, DIAGNOSTIC_MODES, type RetrievalDiagnostics } from "./retrievalDiagnostics.js";

export interface AnswersReportInput {
  readonly summary: AnswersSummary;
  readonly diagnostics?: RetrievalDiagnostics;
  /** Label → value lines for the header (benchmark, model, judge, questions, wall time…). */
  readonly facts: Readonly<Record<string, string>>;
  readonly notes: readonly string[];
}

const f3 = (x: number) => x.toFixed(3);

export function renderAnswersReport(input: AnswersReportInput): string {
  const { summary } = input;
  const methods = Object.keys(summary.methods);
  const facts = Object.entries(input.facts)
    .map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`)
    .join("");
  const head = `<tr><th>metric</th>${methods.map((m) => `<th>${escapeHtml(m)}</th>`).join("")}</tr>`;
  const tableI = ANSWER_METRICS.map((metric) => {
    const cells = methods.map((m) => {
      const x = summary.methods[m]!.metrics[metric];
      const best = summary.best[metric].includes(m);
      return `<td class="${best ? "best" : ""}">${best ? "<b>" : ""}${f3(x.mean)}${best ? "</b>" : ""} <span class="muted">[${f3(x.low)}, ${f3(x.high)}]</span></td>`;
    });
    return `<tr data-metric="${metric}"><td>${escapeHtml(metricLabel(metric))}</td>${cells.join("")}</tr>`;
  }).join("");
  const wins = `<tr class="total" data-row="wins"><td>wins (of ${summary.compared_questions})</td>${methods.map((m) => `<td>${summary.methods[m]!.wins}</td>`).join("")}</tr>`;
  const counts = `<tr data-row="questions"><td>questions</td>${methods.map((m) => `<td>${summary.methods[m]!.questions}</td>`).join("")}</tr>`;
  const metricChart = intervalChart(
    "Table I metrics: mean and 95 % interval per method",
    ANSWER_METRICS.map(metricLabel),
    methods,
    (g, s) => summary.methods[methods[s]!]!.metrics[ANSWER_METRICS[g]!],
    1,
  );

  const judged = methods.filter((m) => summary.methods[m]!.judge !== undefined);
  let judgeHtml = `<p class="muted">No judge was configured (--judge or --judge-url).</p>`;
  if (judged.length > 0) {
    const rows = [...JUDGE_CRITERIA, "total"].map((c) => {
      const cells = judged.map((m) => {
        const j = summary.methods[m]!.judge!;
        const x = c === "total" ? j.total : j.criteria[c as (typeof JUDGE_CRITERIA)[number]].score;
        const missing = c === "total" ? j.incomplete : j.criteria[c as (typeof JUDGE_CRITERIA)[number]].missing;
        return `<td>${x === null ? "–" : x.mean.toFixed(2)}${missing > 0 ? ` <span class="muted">(${missing} missing)</span>` : ""}</td>`;
      });
      return `<tr data-criterion="${c}"><td>${c === "total" ? "total /30" : `${escapeHtml(c)} /5`}</td>${cells.join("")}</tr>`;
    });
    const counts = judged.map((m) => {
      const j = summary.methods[m]!.judge!;
      return `${escapeHtml(m)}: ${j.judged} judged, ${j.incomplete} with missing criteria, ${j.retried} needed the retry`;
    });
    judgeHtml =
      `<table class="numeric" id="table-ii"><tr><th>criterion</th>${judged.map((m) => `<th>${escapeHtml(m)}</th>`).join("")}</tr>${rows.join("")}</table>` +
      `<p class="muted">${counts.join("; ")}. Missing criteria are left out of the means, never counted as 0.</p>` +
      intervalChart("Judge criteria (0–5): mean and 95 % interval", [...JUDGE_CRITERIA], judged, (g, s) => summary.methods[judged[s]!]!.judge!.criteria[JUDGE_CRITERIA[g]!].score, 5);
  }

  let fig1 = `<p class="muted">No retrieval diagnostics (they need a local store holding gold documents; see the notes above).</p>`;
  const d = input.diagnostics;
  if (d !== undefined) {
    const ks = [...DIAGNOSTIC_KS];
    const rows = DIAGNOSTIC_MODES.map(
      (mode) => `<tr data-mode="${mode}"><td>${mode}</td>${ks.map((k) => `<td>${d.modes[mode][String(k)]!.gold.toFixed(2)} / ${d.modes[mode][String(k)]!.density.toFixed(3)}</td>`).join("")}</tr>`,
    );
    fig1 =
      `<p>${d.questions} questions with gold documents; ${d.mean_gold_chunks.toFixed(2)} gold chunks per question on average${d.unlocated_spans > 0 ? ` (${d.unlocated_spans} gold spans were found in no gold document)` : ""}. Cells: mean gold chunks retrieved / mean density (gold ÷ k).</p>` +
      `<table class="numeric" id="fig-1"><tr><th>mode</th>${ks.map((k) => `<th>k = ${k}</th>`).join("")}</tr>${rows.join("")}</table>` +
      lineChart("Gold chunks retrieved", ks, DIAGNOSTIC_MODES.map((mode) => ({ name: mode, ys: ks.map((k) => d.modes[mode][String(k)]!.gold) })), "mean gold chunks") +
      lineChart("Density of gold chunks", ks, DIAGNOSTIC_MODES.map((mode) => ({ name: mode, ys: ks.map((k) => d.modes[mode][String(k)]!.density) })), "gold / k");
  }

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Attr-RAG evaluation</title><style>${REPORT_CSS}
td.best { background: #eef8f0; }</style></head>
<body>
<h1>Attr-RAG evaluation: answers</h1>
<dl class="facts">${facts}</dl>
${input.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`).join("\n")}
<h2 id="answers">Table I: answers against the gold answers</h2>
<table class="numeric" id="table-i">${head}${tableI}${wins}${counts}</table>
<p class="muted">Bold: best mean per metric. [low, high]: ${summary.bootstrap.confidence * 100} % percentile-bootstrap interval (${summary.bootstrap.resamples} resamples, seed ${summary.bootstrap.seed}). Wins: questions where the method is best on a majority of the ${ANSWER_METRICS.length} metrics.</p>
${metricChart}
<h2 id="judge">Table II: LLM judge</h2>
${judgeHtml}
<h2 id="retrieval">Fig. 1: gold chunks in plain retrieval</h2>
${fig1}
</body></html>
`;
}
