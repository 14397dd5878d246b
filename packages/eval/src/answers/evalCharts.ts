// Inline SVG charts for the eval report: drawn here from numbers, no script and no fetch, so the report is
// one self-contained file like the ask report. Colours: the Okabe–Ito palette (readable with colour blindness).

const PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
export const seriesColour = (i: number) => PALETTE[i % PALETTE.length]!;

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);
const n2 = (x: number) => (Math.round(x * 100) / 100).toString();

export interface IntervalPoint {
  readonly mean: number;
  readonly low: number;
  readonly high: number;
}

function legend(series: readonly string[], x: number, y: number): string {
  return series
    .map((s, i) => `<g transform="translate(${x + (i % 4) * 170},${y + Math.floor(i / 4) * 16})"><rect width="10" height="10" fill="${seriesColour(i)}"/><text x="14" y="9" font-size="11">${esc(s)}</text></g>`)
    .join("");
}

/** Groups (metrics or criteria) along x; per group one dot per series with its interval as a whisker. */
export function intervalChart(title: string, groups: readonly string[], series: readonly string[], value: (group: number, series: number) => IntervalPoint | null, yMax: number): string {
  const W = 900;
  const H = 300;
  const left = 44;
  const top = 28;
  const plotH = 190;
  const groupW = (W - left - 10) / groups.length;
  const y = (v: number) => top + plotH - (Math.max(0, Math.min(yMax, v)) / yMax) * plotH;
  const parts: string[] = [`<text x="${left}" y="16" font-size="13" font-weight="600">${esc(title)}</text>`];
  for (let t = 0; t <= 4; t++) {
    const v = (yMax * t) / 4;
    parts.push(`<line x1="${left}" x2="${W - 10}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e5e5"/><text x="${left - 6}" y="${y(v) + 4}" font-size="10" text-anchor="end">${n2(v)}</text>`);
  }
  groups.forEach((g, gi) => {
    const x0 = left + gi * groupW;
    parts.push(`<text x="${x0 + groupW / 2}" y="${top + plotH + 16}" font-size="11" text-anchor="middle">${esc(g)}</text>`);
    series.forEach((s, si) => {
      const p = value(gi, si);
      if (p === null) return;
      const x = x0 + ((si + 1) * groupW) / (series.length + 1);
      const c = seriesColour(si);
      parts.push(
        `<g><title>${esc(`${s} — ${g}: ${p.mean.toFixed(3)} [${p.low.toFixed(3)}, ${p.high.toFixed(3)}]`)}</title>` +
          `<line x1="${x}" x2="${x}" y1="${y(p.low)}" y2="${y(p.high)}" stroke="${c}" stroke-width="2"/>` +
          `<circle cx="${x}" cy="${y(p.mean)}" r="3.5" fill="${c}"/></g>`,
      );
    });
  });
  parts.push(legend(series, left, top + plotH + 30));
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H + 16 * Math.floor((series.length - 1) / 4)}" width="100%" role="img" aria-label="${esc(title)}">${parts.join("")}</svg>`;
}

/** One line per series over shared x values (Fig. 1: k on x). */
export function lineChart(title: string, xs: readonly number[], series: readonly { readonly name: string; readonly ys: readonly number[] }[], yLabel: string): string {
  const W = 440;
  const H = 260;
  const left = 44;
  const top = 28;
  const plotW = W - left - 14;
  const plotH = 170;
  const yMax = Math.max(1e-9, ...series.flatMap((s) => s.ys)) * 1.1;
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  const x = (v: number) => left + (xMax === xMin ? plotW / 2 : ((v - xMin) / (xMax - xMin)) * plotW);
  const y = (v: number) => top + plotH - (v / yMax) * plotH;
  const parts: string[] = [`<text x="${left}" y="16" font-size="13" font-weight="600">${esc(title)}</text>`];
  for (let t = 0; t <= 4; t++) {
    const v = (yMax * t) / 4;
    parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${y(v)}" y2="${y(v)}" stroke="#e5e5e5"/><text x="${left - 6}" y="${y(v) + 4}" font-size="10" text-anchor="end">${n2(v)}</text>`);
  }
  for (const v of xs) parts.push(`<text x="${x(v)}" y="${top + plotH + 14}" font-size="10" text-anchor="middle">${v}</text>`);
  parts.push(`<text x="${left + plotW / 2}" y="${top + plotH + 28}" font-size="11" text-anchor="middle">k (chunks retrieved)</text>`);
  parts.push(`<text x="10" y="${top + plotH / 2}" font-size="11" transform="rotate(-90 10 ${top + plotH / 2})" text-anchor="middle">${esc(yLabel)}</text>`);
  series.forEach((s, si) => {
    const c = seriesColour(si);
    const points = s.ys.map((v, i) => `${x(xs[i]!)},${y(v)}`).join(" ");
    parts.push(`<polyline points="${points}" fill="none" stroke="${c}" stroke-width="2"/>`);
    s.ys.forEach((v, i) => parts.push(`<circle cx="${x(xs[i]!)}" cy="${y(v)}" r="3" fill="${c}"><title>${esc(`${s.name}, k = ${xs[i]}: ${v.toFixed(3)}`)}</title></circle>`));
  });
  parts.push(legend(series.map((s) => s.name), left, top + plotH + 40));
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="49%" role="img" aria-label="${esc(title)}">${parts.join("")}</svg>`;
}
