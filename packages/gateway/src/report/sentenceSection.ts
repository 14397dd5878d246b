// Which set shaped which sentence, in the report and the console (one renderer): the answer with each sentence
// clickable (its sets' bars appear), a sentence × set heat map, and each set's label highlighting, on hover,
// the sentences it supports. The report forbids scripts, so this is CSS only: a sentence is a <label> for a
// hidden radio input, and :checked and :has() pick what shows.
import type { SentenceAttributions } from "@attr-rag/contracts";
import { escapeHtml } from "./escapeHtml.js";
import { exactNumber, formatFixed } from "./formatNumber.js";
import { section } from "./html.js";
import type { ReportData } from "./reportData.js";

/** Heat-map colours: drop ≥ this many nats is the full colour. */
const FULL_COLOUR_NATS = 4;

export interface SentenceView {
  /** Unique within the page: the radio group and every class name derive from it. */
  readonly id: string;
  readonly text: string;
  readonly attribution: SentenceAttributions;
  /** A set's label for people ("[1]" or a set id), and a longer title (its chunks). */
  readonly label: (j: number) => string;
  readonly title?: (j: number) => string;
}

function heat(drop: number): string {
  const t = Math.min(1, Math.abs(drop) / FULL_COLOUR_NATS);
  // Blue for support (the set made the sentence likelier), orange for the opposite; white at 0.
  const [r, g, b] = drop >= 0 ? [0, 114, 178] : [230, 159, 0];
  return `rgba(${r}, ${g}, ${b}, ${(0.85 * t).toFixed(3)})`;
}

function setLabel(v: SentenceView, j: number): string {
  const title = v.title?.(j);
  return `<span class="sa-set sa-set-${j}"${title ? ` title="${escapeHtml(title)}"` : ""}>${escapeHtml(v.label(j))}</span>`;
}

function bars(v: SentenceView, k: number): string {
  const s = v.attribution.sentences[k]!;
  const scale = Math.max(v.attribution.threshold, ...s.drops.map(Math.abs), 1e-9);
  const rows = s.drops
    .map((d, j) => {
      const width = (100 * Math.abs(d)) / scale;
      const cls = s.topSets.includes(j) ? "sa-bar sa-support" : d >= 0 ? "sa-bar" : "sa-bar sa-negative";
      return (
        `<div class="sa-bar-row">${setLabel(v, j)}<span class="sa-bar-track"><span class="${cls}" style="width:${width.toFixed(1)}%"></span></span>` +
        `<span class="sa-value" data-drop="${exactNumber(d)}">${formatFixed(d, 2)}</span></div>`
      );
    })
    .join("");
  const verdict = s.supported
    ? `supported by ${s.topSets.map((j) => escapeHtml(v.label(j))).join(", ")}`
    : `<strong>unsupported by the retrieved passages</strong>: no set's removal lowers it by more than ${formatFixed(v.attribution.threshold, 2)} nats`;
  return (
    `<div class="sa-panel sa-p${k}"><p class="sa-quote">“${escapeHtml(v.text.slice(s.start, s.end))}”</p>${rows}` +
    `<p class="muted">${verdict}. log P with every set ${formatFixed(s.logProbFull, 2)}, with none ${formatFixed(s.logProbNoContext, 2)} (${s.tokens} tokens).</p></div>`
  );
}

function heatMap(v: SentenceView): string {
  const head = v.attribution.setIds.map((_, j) => `<th>${setLabel(v, j)}</th>`).join("");
  const rows = v.attribution.sentences
    .map((s, k) => {
      const cells = s.drops
        .map((d, j) => `<td class="sa-cell${s.topSets.includes(j) ? " sa-support" : ""}" style="background:${heat(d)}" data-drop="${exactNumber(d)}">${formatFixed(d, 2)}</td>`)
        .join("");
      return `<tr class="${s.supported ? "" : "sa-unsupported"}"><th><label for="${v.id}-${k}">${k + 1}</label></th>${cells}<td>${s.supported ? "" : "unsupported"}</td></tr>`;
    })
    .join("\n");
  return `<table class="sa-heat numeric"><thead><tr><th>sentence</th>${head}<th></th></tr></thead><tbody>\n${rows}\n</tbody></table>`;
}

/** Per-view CSS: which panel a checked sentence shows, which sentences a hovered set lights up. */
function viewCss(v: SentenceView): string {
  const n = v.attribution.sentences.length;
  const rules: string[] = [];
  for (let k = 0; k < n; k++) {
    rules.push(`#${v.id}-${k}:checked ~ .sa-panels .sa-p${k} { display: block; }`);
    rules.push(`#${v.id}-${k}:checked ~ .sa-text .sa-s${k} { outline: 2px solid #0072B2; background: #e3f0fa; }`);
  }
  for (let j = 0; j < v.attribution.setIds.length; j++) {
    rules.push(`#${v.id}:has(.sa-set-${j}:hover) .sa-by-${j} { background: #ffe08a; }`);
  }
  return `<style>${rules.join("\n")}</style>`;
}

export function renderSentenceView(v: SentenceView): string {
  const a = v.attribution;
  if (a.sentences.length === 0) return `<p class="muted">no sentences</p>`;
  const inputs = a.sentences.map((_, k) => `<input type="radio" class="sa-pick" name="${v.id}" id="${v.id}-${k}"${k === 0 ? " checked" : ""}>`).join("");
  let cursor = 0;
  let text = "";
  a.sentences.forEach((s, k) => {
    text += escapeHtml(v.text.slice(cursor, s.start));
    const by = s.topSets.map((j) => ` sa-by-${j}`).join("");
    text += `<label for="${v.id}-${k}" class="sa-s sa-s${k}${by}${s.supported ? "" : " sa-unsupported"}" title="${s.supported ? "click: which sets shaped it" : "unsupported by the retrieved passages"}">${escapeHtml(v.text.slice(s.start, s.end))}</label>`;
    cursor = s.end;
  });
  text += escapeHtml(v.text.slice(cursor));
  const panels = a.sentences.map((_, k) => bars(v, k)).join("\n");
  return [
    `<div class="sentattr" id="${v.id}">`,
    viewCss(v),
    inputs,
    `<div class="answer sa-text">${text}</div>`,
    `<div class="sa-panels">${panels}</div>`,
    heatMap(v),
    `</div>`,
  ].join("\n");
}

export const SENTENCE_CSS = `
.sa-pick { position: absolute; opacity: 0; pointer-events: none; }
.sa-s { cursor: pointer; border-radius: 3px; }
.sa-s:hover { background: #eef3fb; }
.sa-s.sa-unsupported { text-decoration: underline wavy #E69F00; }
.sa-panel { display: none; border: 1px solid #e2e2e2; border-radius: 4px; padding: 8px 12px; margin: 8px 0; }
.sa-quote { font-style: italic; margin: 0 0 6px; }
.sa-bar-row { display: grid; grid-template-columns: 8em 1fr 4em; gap: 8px; align-items: center; }
.sa-bar-track { background: #f3f3f3; height: 12px; border-radius: 2px; }
.sa-bar { display: block; height: 12px; background: #9ecae1; border-radius: 2px; }
.sa-bar.sa-support { background: #0072B2; }
.sa-bar.sa-negative { background: #E69F00; }
.sa-value { font-variant-numeric: tabular-nums; text-align: right; }
.sa-set { cursor: default; font-family: ui-monospace, Menlo, Consolas, monospace; }
.sa-set:hover { text-decoration: underline; }
.sa-heat td.sa-support { font-weight: 700; }
.sa-heat th label { cursor: pointer; }
`;

/**
 * The report's section: the final answer against its context blocks, then A_full against the sets. Absent
 * when the request switched sentence-level attribution off (or a baseline ran).
 */
export function renderSentencesSection(data: ReportData): string {
  const parts: string[] = [];
  const final = data.finalAnswer;
  if (final?.sentences !== undefined) {
    const a = final.sentences;
    parts.push(
      "<h3>Final answer, against its context blocks</h3>",
      `<p class="muted">Click a sentence for each block's drop: how many nats of log-probability the sentence loses when that block is left out of the prompt. Hover a block to see the sentences it supports (drop above ${formatFixed(a.threshold, 2)}).</p>`,
      renderSentenceView({ id: "sa-final", text: final.text, attribution: a, label: (j) => a.setIds[j]!, title: (j) => (a.setChunks[j]?.chunkIds ?? []).join(", ") }),
    );
  }
  const initial = data.attribution?.sentences;
  if (initial !== undefined && data.initialAnswer !== "") {
    const members = new Map((data.aligned?.sets ?? []).map((s) => [s.setId, s.chunks.map((c) => c.chunkId).join(", ")]));
    parts.push(
      "<h3>Initial answer A<sub>full</sub>, against every attributed set</h3>",
      renderSentenceView({ id: "sa-initial", text: data.initialAnswer, attribution: initial, label: (j) => initial.setIds[j]!, title: (j) => members.get(initial.setIds[j]!) ?? "" }),
    );
  }
  if (parts.length === 0) return "";
  parts.push(
    `<p class="muted">Leave-one-out: two sets that say the same thing each drop a sentence by little, since the other still supports it. "log P with none" is what the model would say without any passage.</p>`,
  );
  return section("sentences", "Which set shaped which sentence", parts.join("\n"));
}
