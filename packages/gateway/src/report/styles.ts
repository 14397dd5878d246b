// Inline and font-free on purpose: the report is a single file that must look right offline, e-mailed or
// archived next to the data, so nothing may be fetched.
import { SENTENCE_CSS } from "./sentenceSection.js";

export const REPORT_CSS = `
:root { color-scheme: light; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1b1b1b; margin: 0 auto; max-width: 1100px; padding: 24px; }
h1 { font-size: 1.5em; margin: 0 0 8px; }
h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; padding-bottom: 4px; margin-top: 36px; }
h3 { font-size: 1.05em; margin: 20px 0 8px; }
code { font: 0.9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f3f3f3; padding: 0 3px; border-radius: 3px; }
.question { font-size: 1.15em; font-weight: 600; background: #f5f7fb; border-left: 4px solid #0072B2; padding: 8px 12px; white-space: pre-wrap; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 12px 0; }
.facts dt { color: #555; }
.facts dd { margin: 0; }
.warn { background: #fff4e0; border-left: 4px solid #E69F00; padding: 6px 12px; }
.note { background: #eef3fb; border-left: 4px solid #56B4E9; padding: 6px 12px; }
.na, .muted { color: #777; }
.answer { white-space: pre-wrap; background: #fafafa; border: 1px solid #e2e2e2; padding: 12px; border-radius: 4px; }
mark.cite { background: #fff1a8; padding: 0 1px; }
sup.cite-ids { font-size: 0.7em; color: #555; font-family: ui-monospace, Menlo, Consolas, monospace; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
table.numeric td { font-variant-numeric: tabular-nums; }
tr.kept td { background: #eef8f0; }
tr.total td { font-weight: 600; }
.voted { font-weight: 600; }
.argmax { text-decoration: underline; }
.badge { display: inline-block; font-size: 0.75em; font-weight: 700; padding: 0 6px; border-radius: 8px; vertical-align: middle; }
.badge.kept { background: #1e7b34; color: #fff; }
.badge.dropped { background: #ddd; color: #444; }
.badge.undecided { background: #eee; color: #666; font-weight: 400; }
.badge.best { background: #0072B2; color: #fff; }
.chart { overflow-x: auto; }
.alpha-chart text { font-size: 11px; fill: #333; }
.alpha-chart .set-label.kept { font-weight: 700; }
article.set { border: 1px solid #ddd; border-radius: 6px; padding: 4px 14px 12px; margin: 12px 0; }
article.set.kept { border-left: 6px solid #1e7b34; }
article.set.dropped { border-left: 6px solid #bbb; }
.meta, .chunk-meta { color: #555; font-size: 0.9em; }
.reason { font-style: italic; }
.chunk { margin-top: 8px; }
.chunk-text { white-space: pre-wrap; background: #fafafa; border: 1px solid #eee; padding: 8px; font-size: 0.95em; }
footer { margin-top: 40px; color: #777; font-size: 0.85em; border-top: 1px solid #ddd; padding-top: 8px; }
${SENTENCE_CSS}
@media print { .chart { overflow: visible; } article.set { break-inside: avoid; } }
`;
