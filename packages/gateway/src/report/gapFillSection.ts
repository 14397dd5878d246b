import { renderChunk } from "./chunkBlock.js";
import { escapeHtml } from "./escapeHtml.js";
import { notAvailable, section, table } from "./html.js";
import { baselineKind, type ReportData } from "./reportData.js";

export function renderGapFillSection(data: ReportData): string {
  const g = data.gapFill;
  if (!g) {
    const body = baselineKind(data) ? `<p class="note">baseline run: no gap fill</p>` : notAvailable("gap fill");
    return section("gap-fill", "Gap fill", body);
  }
  if (g.gaps.length === 0) return section("gap-fill", "Gap fill", `<p class="muted">no gaps filled</p>`);
  const code = (id: string) => `<code>${escapeHtml(id)}</code>`;
  const rows = g.gaps.map((gap) => ({
    cellsHtml: [
      gap.range ? code(gap.range.docId) : "—",
      gap.range ? `${gap.range.firstOrdinal}–${gap.range.lastOrdinal}` : "—",
      `${code(gap.beforeSetId)} → ${code(gap.afterSetId)}`,
      gap.addedChunkIds.map(code).join(" "),
    ],
  }));
  const texts = g.addedChunks.map((c) => renderChunk(c.id, undefined, c, [`document ${c.docId}`]));
  return section(
    "gap-fill",
    "Gap fill",
    [table(["document", "ordinals", "between sets", "added chunks"], rows), ...(texts.length ? ["<h3>Added chunks</h3>", ...texts] : [])].join("\n"),
  );
}
