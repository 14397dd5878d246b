import { escapeHtml } from "./escapeHtml.js";

// Small builders shared by the sections. Convention: arguments named `*Html` are already-safe markup, every
// other string is text and gets escaped here.

export function notAvailable(what: string): string {
  return `<p class="na">${escapeHtml(what)}: not available</p>`;
}

export function section(id: string, title: string, bodyHtml: string): string {
  return `<section id="${escapeHtml(id)}">\n<h2>${escapeHtml(title)}</h2>\n${bodyHtml}\n</section>`;
}

export interface TableRow {
  readonly cellsHtml: readonly string[];
  readonly className?: string;
}

export function table(headers: readonly string[], rows: readonly TableRow[], className?: string): string {
  const head = headers.map((h) => `<th>${escapeHtml(h)}</th>`).join("");
  const body = rows
    .map((row) => {
      const cls = row.className ? ` class="${escapeHtml(row.className)}"` : "";
      return `<tr${cls}>${row.cellsHtml.map((c) => `<td>${c}</td>`).join("")}</tr>`;
    })
    .join("\n");
  const cls = className ? ` class="${escapeHtml(className)}"` : "";
  return `<table${cls}>\n<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table>`;
}

/** Definition list of label → value; values are text. */
export function facts(entries: readonly (readonly [string, string])[]): string {
  const items = entries.map(([k, v]) => `<dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd>`).join("\n");
  return `<dl class="facts">\n${items}\n</dl>`;
}

/** The kept/dropped marker used in every section, so a set's fate reads the same everywhere. */
export function decisionBadge(kept: boolean | undefined): string {
  if (kept === undefined) return `<span class="badge undecided">no selection</span>`;
  return kept ? `<span class="badge kept">kept</span>` : `<span class="badge dropped">dropped</span>`;
}
