import { chunkId, type Chunk } from "./chunk.js";

export interface ChunkerOptions {
  /** Upper bound on a chunk's length in characters (UTF-16 code units). Default 1000. */
  maxChars?: number;
  /**
   * Characters of the previous chunk repeated at the start of the next one. Default 0: overlap makes
   * neighbouring chunks share text, which alignment (by ordinal) tolerates but duplicated context does not.
   */
  overlapChars?: number;
}

export const DEFAULT_CHUNKER_OPTIONS: Required<ChunkerOptions> = { maxChars: 1000, overlapChars: 0 };

interface Span {
  start: number;
  end: number;
}

/**
 * Separators from coarse to fine: paragraph, line, sentence, word. Each regex matches the text that
 * *ends* a piece, so pieces keep their trailing separator and together cover the input exactly.
 */
const LEVELS: readonly RegExp[] = [/\n[ \t]*\n\s*/g, /\n\s*/g, /[.!?;:]["')\]]*\s+/g, /\s+/g];

/**
 * Recursive splitter: split at the coarsest separator that yields pieces of at most `maxChars`, then
 * greedily pack consecutive pieces back together up to `maxChars`. A single word longer than `maxChars`
 * becomes a chunk of its own rather than being cut, because a cut word corrupts both BM25 and the reader.
 */
export function chunkDocument(docId: string, text: string, options: ChunkerOptions = {}): Chunk[] {
  if (typeof docId !== "string" || docId.length === 0) {
    throw new TypeError("chunkDocument: docId must be a non-empty string");
  }
  if (typeof text !== "string") {
    throw new TypeError(`chunkDocument: text of document "${docId}" must be a string`);
  }
  const { maxChars, overlapChars } = { ...DEFAULT_CHUNKER_OPTIONS, ...options };
  if (!Number.isInteger(maxChars) || maxChars < 1) {
    throw new RangeError(`chunkDocument: maxChars must be a positive integer, got ${maxChars}`);
  }
  if (!Number.isInteger(overlapChars) || overlapChars < 0 || overlapChars >= maxChars) {
    throw new RangeError(
      `chunkDocument: overlapChars must be an integer in [0, maxChars), got ${overlapChars} with maxChars ${maxChars}`,
    );
  }
  const spans = splitSpan(text, { start: 0, end: text.length }, 0, maxChars)
    .map((span) => trimSpan(text, span))
    .filter((span) => span.end > span.start);
  const withOverlap = overlapChars > 0 ? addOverlap(text, spans, overlapChars) : spans;
  return withOverlap.map((span, ordinal) => ({
    id: chunkId(docId, ordinal),
    docId,
    ordinal,
    text: text.slice(span.start, span.end),
    start: span.start,
    end: span.end,
  }));
}

function splitSpan(text: string, span: Span, level: number, maxChars: number): Span[] {
  if (span.end - span.start <= maxChars || level >= LEVELS.length) return [span];
  const pieces = piecesAt(text, span, LEVELS[level]!);
  if (pieces.length === 1) return splitSpan(text, span, level + 1, maxChars);

  const out: Span[] = [];
  let current: Span | undefined;
  for (const piece of pieces) {
    if (piece.end - piece.start > maxChars) {
      if (current) out.push(current);
      current = undefined;
      out.push(...splitSpan(text, piece, level + 1, maxChars));
    } else if (current && piece.end - current.start <= maxChars) {
      current = { start: current.start, end: piece.end };
    } else {
      if (current) out.push(current);
      current = { ...piece };
    }
  }
  if (current) out.push(current);
  return out;
}

function piecesAt(text: string, span: Span, separator: RegExp): Span[] {
  const pieces: Span[] = [];
  const re = new RegExp(separator.source, "g");
  re.lastIndex = span.start;
  let pieceStart = span.start;
  for (let m = re.exec(text); m !== null && m.index < span.end; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    const pieceEnd = Math.min(m.index + m[0].length, span.end);
    if (m.index > pieceStart) {
      pieces.push({ start: pieceStart, end: pieceEnd });
      pieceStart = pieceEnd;
    }
  }
  if (pieceStart < span.end) pieces.push({ start: pieceStart, end: span.end });
  return pieces;
}

function trimSpan(text: string, span: Span): Span {
  let { start, end } = span;
  while (start < end && /\s/.test(text[start]!)) start++;
  while (end > start && /\s/.test(text[end - 1]!)) end--;
  return { start, end };
}

/** Extends each chunk backwards by up to `overlapChars`, moved forward to a word boundary. */
function addOverlap(text: string, spans: Span[], overlapChars: number): Span[] {
  return spans.map((span, i) => {
    if (i === 0) return span;
    let start = Math.max(spans[i - 1]!.start, span.start - overlapChars);
    while (start < span.start && start > 0 && !/\s/.test(text[start - 1]!)) start++;
    while (start < span.start && /\s/.test(text[start]!)) start++;
    return { start, end: span.end };
  });
}
