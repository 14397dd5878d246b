import type { AttributionTable } from "@attr-rag/contracts";
import { alphaScale } from "./alphaScale.js";
import { escapeHtml } from "./escapeHtml.js";
import { exactNumber, formatAlpha, formatFixed } from "./formatNumber.js";
import { metricColour, metricName } from "./metricStyle.js";

const BAR_WIDTH = 12;
const GROUP_GAP = 28;
const PLOT_HEIGHT = 260;
const MARGIN = { left: 56, right: 16, top: 56, bottom: 110 } as const;
const LEGEND_Y = 16;
// Legend entries are laid out without measuring text (no DOM here): a generous per-character width.
const CHAR_WIDTH = 7;

// Rotated labels longer than this would run off the left edge; the full id is in the label's tooltip.
const LABEL_CHARS = 24;

function shorten(text: string): string {
  return text.length <= LABEL_CHARS ? text : `${text.slice(0, LABEL_CHARS - 1)}…`;
}

/** Coordinates with two decimals: sub-pixel precision is plenty and the markup stays stable across runs. */
function px(value: number): string {
  return formatFixed(value, 2);
}

function legend(table: AttributionTable): { svg: string; width: number } {
  let x = MARGIN.left;
  const items = table.metrics.map((metric) => {
    const name = metricName(metric);
    const item =
      `<rect x="${px(x)}" y="${LEGEND_Y - 9}" width="10" height="10" fill="${metricColour(metric)}"/>` +
      `<text x="${px(x + 14)}" y="${LEGEND_Y}" class="legend">${escapeHtml(name)}</text>`;
    x += 14 + name.length * CHAR_WIDTH + 18;
    return item;
  });
  return { svg: `<g class="legend">${items.join("")}</g>`, width: x + MARGIN.right };
}

/**
 * Grouped bar chart of α: one group per set in re-rank order (the order of the attribution rows), one bar per
 * metric. Bars carry data-set/data-metric/data-alpha with the exact values so the picture can be checked
 * against the table by machine. `keptOf` says whether selection kept a set (undefined: no selection).
 */
export function renderAlphaChart(table: AttributionTable, keptOf: (setId: string) => boolean | undefined): string {
  const rows = table.rows;
  const metrics = table.metrics;
  const alphas = rows.flatMap((r) => r.scores.map((s) => s.alpha));
  const scale = alphaScale(alphas);
  const groupWidth = metrics.length * BAR_WIDTH + GROUP_GAP;
  const plotWidth = rows.length * groupWidth;
  const legendPart = legend(table);
  const width = Math.max(MARGIN.left + plotWidth + MARGIN.right, legendPart.width);
  const height = MARGIN.top + PLOT_HEIGHT + MARGIN.bottom;
  const y = (v: number) => MARGIN.top + ((scale.max - v) / (scale.max - scale.min)) * PLOT_HEIGHT;
  const plotRight = MARGIN.left + plotWidth;

  const parts: string[] = [];
  parts.push(`<title>α per chunk set and metric</title>`);

  // Bands go first so the bars and grid lines are drawn over them.
  rows.forEach((row, g) => {
    const x0 = MARGIN.left + g * groupWidth;
    const kept = keptOf(row.setId);
    const cx = x0 + groupWidth / 2;
    if (kept) {
      parts.push(`<rect class="kept-band" x="${px(x0 + 2)}" y="${MARGIN.top}" width="${px(groupWidth - 4)}" height="${PLOT_HEIGHT}" fill="#e6f4ea"/>`);
    }
    if (kept !== undefined) {
      const cls = kept ? "marker kept" : "marker dropped";
      const style = kept ? `font-weight="bold" fill="#1e7b34"` : `fill="#777777"`;
      parts.push(`<text class="${cls}" x="${px(cx)}" y="${MARGIN.top - 8}" text-anchor="middle" ${style}>${kept ? "✓ kept" : "dropped"}</text>`);
    }
  });

  for (const tick of scale.ticks) {
    const ty = px(y(tick));
    const zero = Math.abs(tick) < scale.step / 1e6;
    parts.push(`<line x1="${MARGIN.left}" x2="${px(plotRight)}" y1="${ty}" y2="${ty}" stroke="${zero ? "#333333" : "#dddddd"}"/>`);
    parts.push(`<text x="${MARGIN.left - 6}" y="${ty}" text-anchor="end" dominant-baseline="middle" class="tick">${formatFixed(tick, scale.tickDecimals)}</text>`);
  }
  parts.push(`<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + PLOT_HEIGHT}" stroke="#333333"/>`);
  parts.push(`<text transform="translate(16 ${px(MARGIN.top + PLOT_HEIGHT / 2)}) rotate(-90)" text-anchor="middle" class="axis-title">α</text>`);

  const zeroY = y(0);
  rows.forEach((row, g) => {
    const x0 = MARGIN.left + g * groupWidth + GROUP_GAP / 2;
    const setId = escapeHtml(row.setId);
    metrics.forEach((metric, m) => {
      const score = row.scores.find((s) => s.metric === metric);
      // A missing or non-finite α has no height to draw; the table shows it as such.
      if (score === undefined || !Number.isFinite(score.alpha)) return;
      const name = escapeHtml(metricName(metric));
      const top = Math.min(zeroY, y(score.alpha));
      // At least one pixel, so a zero α is still visible and hoverable.
      const h = Math.max(1, Math.abs(y(score.alpha) - zeroY));
      parts.push(
        `<rect class="bar" data-set="${setId}" data-metric="${name}" data-alpha="${exactNumber(score.alpha)}" ` +
          `x="${px(x0 + m * BAR_WIDTH)}" y="${px(top)}" width="${BAR_WIDTH - 1}" height="${px(h)}" fill="${metricColour(metric)}">` +
          `<title>set ${setId} ${name} α=${formatAlpha(score.alpha)}</title></rect>`,
      );
    });
    const kept = keptOf(row.setId);
    const cx = x0 - GROUP_GAP / 2 + groupWidth / 2;
    const weight = kept ? ` font-weight="bold"` : "";
    const cls = kept ? "set-label kept" : "set-label";
    parts.push(
      `<text class="${cls}" transform="translate(${px(cx)} ${MARGIN.top + PLOT_HEIGHT + 14}) rotate(-35)" text-anchor="end"${weight}>` +
        `<title>${setId}</title>#${g + 1} ${escapeHtml(shorten(row.setId))}</text>`,
    );
  });

  parts.push(legendPart.svg);
  // No xmlns: inline SVG in HTML5 does not need it, and the report must not contain any URL.
  return `<svg class="alpha-chart" width="${px(width)}" height="${height}" viewBox="0 0 ${px(width)} ${height}" role="img" aria-label="grouped bar chart of α per chunk set and metric">\n${parts.join("\n")}\n</svg>`;
}
