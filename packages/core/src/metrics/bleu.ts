// BLEU exactly as sacrebleu 2.x computes it with its defaults (used for evaluation only):
//   - each segment: optional lower-casing, trailing whitespace stripped, 13a tokenization;
//   - clipped n-gram matches for n = 1..4 against the per-n-gram maximum over the references;
//   - reference length per segment = the reference length closest to the hypothesis length
//     (ties -> the shorter reference), summed over the corpus;
//   - brevity penalty exp(1 - ref_len / sys_len) when sys_len < ref_len (0 when sys_len = 0);
//   - "exp" smoothing (mteval-v13a): the k-th order with zero matches gets precision
//     100 / (2^k * total) instead of 0;
//   - corpus BLEU: effective order off; sentence BLEU: effective order on (orders with no
//     hypothesis n-grams are left out of the geometric mean instead of zeroing it).
// SCALE: scores and precisions are on sacrebleu's 0-100 scale, not 0-1.

import { tokenize13a } from "./tokenize13a.js";
import { pythonRstrip, pythonSplit } from "./pythonText.js";
import { describeValue, requireInteger, requireString, requireStringArray } from "./validate.js";

export type BleuSmoothMethod = "exp" | "floor" | "add-k" | "none";

export interface BleuOptions {
  /** Smoothing method (sacrebleu `smooth_method`). Default "exp". */
  readonly smoothMethod?: BleuSmoothMethod;
  /** Value for "floor" (default 0.1) and "add-k" (default 1); ignored by "exp" and "none". */
  readonly smoothValue?: number;
  /** Leave out n-gram orders the hypothesis has none of. Default: false for corpus, true for sentence BLEU. */
  readonly effectiveOrder?: boolean;
  /** Lower-case hypotheses and references first. Default false. */
  readonly lowercase?: boolean;
  /** Highest n-gram order. Default 4. */
  readonly maxNgramOrder?: number;
  /** "13a" (default, sacrebleu's default) or "none" (split on whitespace only). */
  readonly tokenize?: "13a" | "none";
}

/** A BLEU result with the sufficient statistics that produced it (sacrebleu's BLEUScore). */
export interface BleuResult {
  /** BLEU on the 0-100 scale. */
  readonly score: number;
  /** Matched (clipped) n-grams for n = 1..maxNgramOrder. */
  readonly counts: number[];
  /** Hypothesis n-grams for n = 1..maxNgramOrder. */
  readonly totals: number[];
  /** Smoothed n-gram precisions on the 0-100 scale (all 0 when nothing matched at all). */
  readonly precisions: number[];
  /** Brevity penalty in [0, 1]. */
  readonly bp: number;
  /** Hypothesis length in tokens (summed over the corpus). */
  readonly sysLen: number;
  /** Closest reference length in tokens (summed over the corpus). */
  readonly refLen: number;
}

const SMOOTH_DEFAULTS: Record<BleuSmoothMethod, number | undefined> = {
  exp: undefined,
  floor: 0.1,
  "add-k": 1,
  none: undefined,
};

interface SegmentStats {
  sysLen: number;
  refLen: number;
  correct: number[];
  total: number[];
}

interface ResolvedOptions {
  readonly smoothMethod: BleuSmoothMethod;
  readonly smoothValue: number | undefined;
  readonly effectiveOrder: boolean;
  readonly lowercase: boolean;
  readonly maxNgramOrder: number;
  readonly tokenize: "13a" | "none";
}

function resolveOptions(options: BleuOptions, effectiveOrderDefault: boolean, caller: string): ResolvedOptions {
  if (typeof options !== "object" || options === null) {
    throw new TypeError(`${caller}(options) must be an object, got ${describeValue(options)}.`);
  }
  const smoothMethod = options.smoothMethod ?? "exp";
  if (!(smoothMethod in SMOOTH_DEFAULTS)) {
    throw new RangeError(`${caller}: unknown smoothMethod ${JSON.stringify(smoothMethod)}; use "exp", "floor", "add-k" or "none".`);
  }
  const tokenize = options.tokenize ?? "13a";
  if (tokenize !== "13a" && tokenize !== "none") {
    throw new RangeError(`${caller}: unknown tokenize ${JSON.stringify(tokenize)}; use "13a" or "none".`);
  }
  const maxNgramOrder = options.maxNgramOrder ?? 4;
  requireInteger(maxNgramOrder, 1, `${caller}(options.maxNgramOrder)`);
  if (options.smoothValue !== undefined && !Number.isFinite(options.smoothValue)) {
    throw new RangeError(`${caller}(options.smoothValue) must be a finite number, got ${String(options.smoothValue)}.`);
  }
  return {
    smoothMethod,
    smoothValue: options.smoothValue ?? SMOOTH_DEFAULTS[smoothMethod],
    effectiveOrder: options.effectiveOrder ?? effectiveOrderDefault,
    lowercase: options.lowercase ?? false,
    maxNgramOrder,
    tokenize,
  };
}

function preprocess(segment: string, options: ResolvedOptions): string[] {
  const text = options.lowercase ? segment.toLowerCase() : segment;
  const stripped = pythonRstrip(text);
  return pythonSplit(options.tokenize === "13a" ? tokenize13a(stripped) : stripped);
}

/** n-gram counts per order: result[n - 1] maps "tok1 tok2 ... tokn" to its count. */
function ngramCountsByOrder(tokens: readonly string[], maxOrder: number): Map<string, number>[] {
  const byOrder: Map<string, number>[] = [];
  for (let n = 1; n <= maxOrder; n++) {
    const counts = new Map<string, number>();
    for (let i = 0; i + n <= tokens.length; i++) {
      // Tokens never contain whitespace (they were split on it), so " " cannot cause collisions.
      const key = tokens.slice(i, i + n).join(" ");
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    byOrder.push(counts);
  }
  return byOrder;
}

/** sacrebleu's _get_closest_ref_len: closest to the hypothesis length, ties -> shorter. */
function closestReferenceLength(hypothesisLength: number, referenceLengths: readonly number[]): number {
  let bestDiff = -1;
  let best = -1;
  for (const length of referenceLengths) {
    const diff = Math.abs(hypothesisLength - length);
    if (bestDiff === -1 || diff < bestDiff) {
      bestDiff = diff;
      best = length;
    } else if (diff === bestDiff && length < best) {
      best = length;
    }
  }
  return best;
}

function segmentStats(hypothesis: string, references: readonly string[], options: ResolvedOptions): SegmentStats {
  const order = options.maxNgramOrder;
  // Clip against the maximum count of each n-gram over all references.
  const referenceMax = ngramCountsByOrder([], order);
  const referenceLengths: number[] = [];
  for (const reference of references) {
    const tokens = preprocess(reference, options);
    referenceLengths.push(tokens.length);
    ngramCountsByOrder(tokens, order).forEach((counts, n) => {
      for (const [ngram, count] of counts) {
        referenceMax[n]!.set(ngram, Math.max(referenceMax[n]!.get(ngram) ?? 0, count));
      }
    });
  }
  const tokens = preprocess(hypothesis, options);
  const correct = new Array<number>(order).fill(0);
  const total = new Array<number>(order).fill(0);
  ngramCountsByOrder(tokens, order).forEach((counts, n) => {
    for (const [ngram, count] of counts) {
      total[n] = total[n]! + count;
      correct[n] = correct[n]! + Math.min(count, referenceMax[n]!.get(ngram) ?? 0);
    }
  });
  return { sysLen: tokens.length, refLen: closestReferenceLength(tokens.length, referenceLengths), correct, total };
}

/** sacrebleu's my_log: log, with log(0) floored to -9999999999 so the score becomes 0, not NaN. */
function flooredLog(x: number): number {
  return x === 0 ? -9999999999 : Math.log(x);
}

/** sacrebleu's BLEU.compute_bleu, from summed statistics. */
function computeBleu(stats: SegmentStats, options: ResolvedOptions): BleuResult {
  const { sysLen, refLen } = stats;
  const maxOrder = options.maxNgramOrder;
  const correct = [...stats.correct];
  const total = [...stats.total];
  let bp = 1.0;
  if (sysLen < refLen) bp = sysLen > 0 ? Math.exp(1 - refLen / sysLen) : 0.0;

  const precisions = new Array<number>(maxOrder).fill(0);
  if (!correct.some((c) => c !== 0)) {
    return { score: 0.0, counts: correct, totals: total, precisions, bp, sysLen, refLen };
  }

  const smoothValue = options.smoothValue ?? 0;
  let smoothMteval = 1.0;
  let effectiveOrder = maxOrder;
  for (let n = 1; n <= maxOrder; n++) {
    if (options.smoothMethod === "add-k" && n > 1) {
      // sacrebleu adds k to the returned counts/totals too.
      correct[n - 1] = correct[n - 1]! + smoothValue;
      total[n - 1] = total[n - 1]! + smoothValue;
    }
    if (total[n - 1] === 0) break;
    if (options.effectiveOrder) effectiveOrder = n;
    if (correct[n - 1] === 0) {
      if (options.smoothMethod === "exp") {
        smoothMteval *= 2;
        precisions[n - 1] = 100 / (smoothMteval * total[n - 1]!);
      } else if (options.smoothMethod === "floor") {
        precisions[n - 1] = (100 * smoothValue) / total[n - 1]!;
      }
    } else {
      precisions[n - 1] = (100 * correct[n - 1]!) / total[n - 1]!;
    }
  }

  let logSum = 0;
  for (let n = 0; n < effectiveOrder; n++) logSum += flooredLog(precisions[n]!);
  const score = bp * Math.exp(logSum / effectiveOrder);
  return { score, counts: correct, totals: total, precisions, bp, sysLen, refLen };
}

function addStats(sum: SegmentStats, segment: SegmentStats): void {
  sum.sysLen += segment.sysLen;
  sum.refLen += segment.refLen;
  segment.correct.forEach((c, i) => (sum.correct[i] = sum.correct[i]! + c));
  segment.total.forEach((t, i) => (sum.total[i] = sum.total[i]! + t));
}

/**
 * Corpus BLEU, equal to `sacrebleu.corpus_bleu(hypotheses, references, **defaults)`.
 * @param hypotheses one system output per segment.
 * @param references reference *streams*, as in sacrebleu: `references[k][i]` is the k-th
 *   reference of segment i. Each stream must have one entry per hypothesis; an entry may be
 *   null to give that segment fewer references. (sacrebleu silently truncates mismatched
 *   lengths; we throw instead.)
 * @returns score on the 0-100 scale plus counts, totals, precisions, bp, sysLen, refLen.
 */
export function corpusBleu(
  hypotheses: readonly string[],
  references: ReadonlyArray<ReadonlyArray<string | null>>,
  options: BleuOptions = {},
): BleuResult {
  requireStringArray(hypotheses, "corpusBleu(hypotheses)");
  if (!Array.isArray(references) || references.length === 0) {
    throw new TypeError(
      `corpusBleu(references) must be a non-empty array of reference streams (string[][]), got ${describeValue(references)}. ` +
        "For one reference per hypothesis pass [references].",
    );
  }
  if (hypotheses.length === 0) {
    throw new RangeError("corpusBleu(hypotheses) is empty; BLEU needs at least one segment.");
  }
  references.forEach((stream, k) => {
    if (!Array.isArray(stream)) {
      throw new TypeError(`corpusBleu(references[${k}]) must be an array of strings (one per hypothesis), got ${describeValue(stream)}.`);
    }
    if (stream.length !== hypotheses.length) {
      throw new RangeError(
        `corpusBleu: reference stream ${k} has ${stream.length} entries but there are ${hypotheses.length} hypotheses; ` +
          "each stream needs one entry per hypothesis (use null for a missing reference).",
      );
    }
  });
  const resolved = resolveOptions(options, false, "corpusBleu");
  const sum: SegmentStats = {
    sysLen: 0,
    refLen: 0,
    correct: new Array<number>(resolved.maxNgramOrder).fill(0),
    total: new Array<number>(resolved.maxNgramOrder).fill(0),
  };
  hypotheses.forEach((hypothesis, i) => {
    const segmentReferences: string[] = [];
    references.forEach((stream, k) => {
      const reference = stream[i];
      if (reference === null || reference === undefined) return;
      requireString(reference, `corpusBleu(references[${k}][${i}])`);
      segmentReferences.push(reference);
    });
    if (segmentReferences.length === 0) {
      throw new RangeError(`corpusBleu: segment ${i} has no reference (all streams are null there).`);
    }
    addStats(sum, segmentStats(hypothesis, segmentReferences, resolved));
  });
  return computeBleu(sum, resolved);
}

/**
 * Sentence BLEU, equal to `sacrebleu.sentence_bleu(hypothesis, references)`: exp smoothing and
 * effective order by default.
 * @param references one reference string, or several.
 * @returns score on the 0-100 scale plus its statistics.
 */
export function sentenceBleu(
  hypothesis: string,
  references: string | readonly string[],
  options: BleuOptions = {},
): BleuResult {
  requireString(hypothesis, "sentenceBleu(hypothesis)");
  const referenceList = typeof references === "string" ? [references] : references;
  requireStringArray(referenceList, "sentenceBleu(references)");
  if (referenceList.length === 0) {
    throw new RangeError("sentenceBleu(references) is empty; pass at least one reference string.");
  }
  const resolved = resolveOptions(options, true, "sentenceBleu");
  return computeBleu(segmentStats(hypothesis, referenceList, resolved), resolved);
}
