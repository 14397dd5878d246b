/** A chunk position: the unit gap filling works on. */
export interface ChunkRef {
  readonly docId: string;
  readonly ordinal: number;
}

/** A run of consecutive chunks of one document, `[first, last]` inclusive. */
export interface ChunkSpan {
  readonly docId: string;
  readonly first: number;
  readonly last: number;
}

export interface GapFillResult {
  /** Selected chunks plus the filled gaps, as maximal runs, documents in first-selected order. */
  readonly spans: readonly ChunkSpan[];
  /** Chunks that were not selected but sit in a filled gap: fetch these from the index. */
  readonly added: readonly ChunkRef[];
  /** Gaps left open because they were wider than `maxGap` (for the explanation). */
  readonly unfilled: readonly { docId: string; after: number; before: number }[];
}

export const DEFAULT_MAX_GAP = 2;

/**
 * Restores continuity inside each document: between two selected chunks whose ordinals differ by at most
 * `maxGap`, the chunks in between are added (55, 57, 59 → 55..59 with maxGap 2; 55 and 58 stay apart).
 * Pure planning: the caller fetches `added` by (docId, ordinal).
 */
export function fillGaps(selected: readonly ChunkRef[], maxGap: number = DEFAULT_MAX_GAP): GapFillResult {
  if (!Number.isInteger(maxGap) || maxGap < 0) {
    throw new RangeError(`fillGaps: maxGap must be an integer ≥ 0, got ${maxGap}`);
  }
  const byDoc = new Map<string, Set<number>>();
  for (const ref of selected) {
    if (!Number.isInteger(ref.ordinal) || ref.ordinal < 0) {
      throw new RangeError(`fillGaps: chunk of "${ref.docId}" has invalid ordinal ${ref.ordinal}`);
    }
    const ordinals = byDoc.get(ref.docId) ?? new Set<number>();
    ordinals.add(ref.ordinal);
    byDoc.set(ref.docId, ordinals);
  }

  const spans: ChunkSpan[] = [];
  const added: ChunkRef[] = [];
  const unfilled: { docId: string; after: number; before: number }[] = [];
  for (const [docId, ordinalSet] of byDoc) {
    const ordinals = [...ordinalSet].sort((a, b) => a - b);
    let first = ordinals[0]!;
    let last = first;
    for (const ordinal of ordinals.slice(1)) {
      const distance = ordinal - last;
      if (distance <= Math.max(1, maxGap)) {
        for (let o = last + 1; o < ordinal; o++) added.push({ docId, ordinal: o });
      } else {
        spans.push({ docId, first, last });
        unfilled.push({ docId, after: last, before: ordinal });
        first = ordinal;
      }
      last = ordinal;
    }
    spans.push({ docId, first, last });
  }
  return { spans, added, unfilled };
}
