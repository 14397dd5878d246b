// Fig. 1 (b) needs gold *chunks*, but benchmarks label gold documents and, sometimes, gold spans. A chunk is
// gold when it belongs to a gold document and overlaps one of the question's gold spans found in that
// document; a question without spans (short QA passages: `gold_spans` is empty) counts every chunk of its
// gold documents. A gold document in which none of the spans occurs contributes no gold chunk (an experiment
// split over two documents has its steps in both, each document holding some).

export interface ChunkExtent {
  readonly id: string;
  /** Character offsets into the document text, end exclusive. */
  readonly start: number;
  readonly end: number;
}

/** Where `span` occurs in `text`: exactly, else with runs of whitespace matched loosely; undefined if nowhere. */
export function locateSpan(text: string, span: string): { start: number; end: number } | undefined {
  const needle = span.trim();
  if (needle === "") return undefined;
  const exact = text.indexOf(needle);
  if (exact >= 0) return { start: exact, end: exact + needle.length };
  const pattern = needle
    .split(/\s+/)
    .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join("\\s+");
  const m = new RegExp(pattern).exec(text);
  return m ? { start: m.index, end: m.index + m[0].length } : undefined;
}

/**
 * Ids of the gold chunks of one gold document: every chunk when the question has no spans, else the chunks
 * overlapping a span located in `text` (spans that occur elsewhere are ignored here).
 */
export function goldChunkIds(text: string, chunks: readonly ChunkExtent[], spans: readonly string[]): string[] {
  if (spans.length === 0) return chunks.map((c) => c.id);
  const located = spans.map((s) => locateSpan(text, s)).filter((x): x is { start: number; end: number } => x !== undefined);
  return chunks.filter((c) => located.some((s) => s.start < c.end && c.start < s.end)).map((c) => c.id);
}

export interface GoldAtK {
  /** Gold chunks among the top k. */
  readonly gold: number;
  /** gold / k: the share of the retrieved context that is gold. */
  readonly density: number;
}

/** Gold chunks retrieved, and their density, at each cut-off (fewer hits than k still divide by k: the context has k slots). */
export function goldAtCutoffs(rankedChunkIds: readonly string[], gold: ReadonlySet<string>, ks: readonly number[]): Record<string, GoldAtK> {
  const out: Record<string, GoldAtK> = {};
  for (const k of ks) {
    if (!Number.isInteger(k) || k < 1) throw new RangeError(`goldAtCutoffs: k must be an integer ≥ 1, got ${k}`);
    const top = new Set(rankedChunkIds.slice(0, k));
    let found = 0;
    for (const id of top) if (gold.has(id)) found++;
    out[String(k)] = { gold: found, density: found / k };
  }
  return out;
}
