import { renderCitedText } from "./citedAnswer.js";
import { escapeHtml } from "./escapeHtml.js";
import { notAvailable, section } from "./html.js";
import type { ReportData } from "./reportData.js";

function renderWarnings(data: ReportData): string {
  if (!data.done) return notAvailable("warnings (no done event)");
  if (data.done.warnings.length === 0) return `<p class="muted">no warnings</p>`;
  const items = data.done.warnings.map((w) => `<li>${escapeHtml(w)}</li>`).join("\n");
  return `<ul class="warnings">\n${items}\n</ul>`;
}

function renderAnswerBody(data: ReportData): string {
  const final = data.finalAnswer;
  if (final) {
    const context = final.contextChunkIds.length
      ? `<p class="muted">final context (prompt order): ${final.contextChunkIds.map((id) => `<code>${escapeHtml(id)}</code>`).join(" ")}</p>`
      : "";
    return `<div class="answer">${renderCitedText(final.text, final.citations)}</div>\n${context}`;
  }
  // Deltas without a final_answer mean the stream stopped mid-answer: show what the caller saw, uncited.
  if (data.streamedFinalAnswer) {
    return `<p class="warn">⚠ final answer incomplete: no final_answer event, text from the streamed deltas, no citations</p>\n<div class="answer">${escapeHtml(data.streamedFinalAnswer)}</div>`;
  }
  return notAvailable("final answer");
}

function renderInitialAnswer(data: ReportData): string {
  // A_full is the answer every occluded answer is compared with; useful when α values look surprising.
  if (!data.initialAnswer) return "";
  return `<details><summary>initial answer A<sub>full</sub> (with every set in context)</summary>\n<div class="answer">${escapeHtml(data.initialAnswer)}</div>\n</details>`;
}

export function renderAnswerSection(data: ReportData): string {
  return section(
    "answer",
    "Answer",
    [renderAnswerBody(data), "<h3>Warnings</h3>", renderWarnings(data), renderInitialAnswer(data)].join("\n"),
  );
}
