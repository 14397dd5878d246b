import { renderChunk } from "./chunkBlock.js";
import { formatFixed } from "./formatNumber.js";
import { section } from "./html.js";
import type { ReportData } from "./reportData.js";

/**
 * The retrieval list, shown only when no alignment ran (baselines): otherwise every retrieved chunk already
 * appears inside its chunk set and listing it twice would double a long page.
 */
export function renderRetrievedSection(data: ReportData): string {
  if (data.aligned || !data.retrieved) return "";
  const inContext = new Set(data.finalAnswer?.contextChunkIds ?? []);
  const blocks = data.retrieved.chunks.map((sc, i) => {
    const id = sc.chunk?.id ?? `(chunk ${i + 1} without data)`;
    const meta = [`rank ${sc.rank}`, `score ${formatFixed(sc.score, 3)}`];
    if (sc.chunk) meta.push(`document ${sc.chunk.docId}`);
    if (inContext.has(id)) meta.push("in final context");
    return renderChunk(id, undefined, sc.chunk, meta);
  });
  const body = blocks.length ? blocks.join("\n") : `<p class="muted">no chunks retrieved</p>`;
  return section("retrieved", "Retrieved chunks", body);
}
