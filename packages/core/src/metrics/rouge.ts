// ROUGE-N, ROUGE-L and ROUGE-Lsum, equal to Google's rouge-score package
// (`RougeScorer([...], use_stemmer).score(target, prediction)`), including its edge cases:
//   - n-gram precision/recall divide by max(count, 1), so an empty side gives 0, not NaN;
//   - ROUGE-L and ROUGE-Lsum return all zeros when either side has no tokens;
//   - F = 2PR / (P + R), or 0 when P + R = 0, computed in the same float order as Python.
// Argument order follows rouge-score: the reference (target) first, the candidate second.

import { lcsLength, lcsReferenceIndices } from "./lcs.js";
import { rougeTokenize, type RougeTokenizeOptions } from "./tokenize.js";
import { requireInteger, requireString } from "./validate.js";

/** Precision, recall and F1 of one ROUGE variant, each in [0, 1] (rouge-score's Score tuple). */
export interface RougeScore {
  /** Matched units / units in the candidate. */
  readonly precision: number;
  /** Matched units / units in the reference. */
  readonly recall: number;
  /** F1: harmonic mean of precision and recall (0 when both are 0). */
  readonly fmeasure: number;
}

export interface RougeScores {
  readonly rouge1: RougeScore;
  readonly rouge2: RougeScore;
  readonly rougeL: RougeScore;
  readonly rougeLsum: RougeScore;
}

export type RougeOptions = RougeTokenizeOptions;

const ZERO: RougeScore = Object.freeze({ precision: 0, recall: 0, fmeasure: 0 });

function score(precision: number, recall: number): RougeScore {
  // Same expression and evaluation order as rouge-score's scoring.fmeasure, for bit-equal results.
  const fmeasure = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return { precision, recall, fmeasure };
}

function ngramCounts(tokens: readonly string[], n: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i + n <= tokens.length; i++) {
    // Tokens are [a-z0-9]+, so joining with a space cannot make two different n-grams collide.
    const key = tokens.slice(i, i + n).join(" ");
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

function scoreNgrams(referenceTokens: readonly string[], candidateTokens: readonly string[], n: number): RougeScore {
  const reference = ngramCounts(referenceTokens, n);
  const candidate = ngramCounts(candidateTokens, n);
  let overlap = 0;
  for (const [ngram, count] of reference) overlap += Math.min(count, candidate.get(ngram) ?? 0);
  const referenceTotal = Math.max(referenceTokens.length - n + 1, 0);
  const candidateTotal = Math.max(candidateTokens.length - n + 1, 0);
  return score(overlap / Math.max(candidateTotal, 1), overlap / Math.max(referenceTotal, 1));
}

/** Interns tokens as small integers so the LCS loops compare numbers, not strings. */
class TokenIds {
  private readonly ids = new Map<string, number>();

  encode(tokens: readonly string[]): Int32Array {
    const encoded = new Int32Array(tokens.length);
    tokens.forEach((token, index) => {
      let id = this.ids.get(token);
      if (id === undefined) {
        id = this.ids.size;
        this.ids.set(token, id);
      }
      encoded[index] = id;
    });
    return encoded;
  }

  get size(): number {
    return this.ids.size;
  }
}

function scoreLcs(referenceTokens: readonly string[], candidateTokens: readonly string[]): RougeScore {
  if (referenceTokens.length === 0 || candidateTokens.length === 0) return ZERO;
  const ids = new TokenIds();
  const length = lcsLength(ids.encode(referenceTokens), ids.encode(candidateTokens));
  return score(length / candidateTokens.length, length / referenceTokens.length);
}

/** rouge-score's rougeLsum sentence split: on "\n" only, dropping empty lines (but not blank ones). */
function splitSentences(text: string): string[] {
  return text.split("\n").filter((line) => line.length > 0);
}

/**
 * Summary-level LCS (ROUGE paper section 3.2, as rouge-score implements it): for each reference
 * sentence, take the union of its LCS with every candidate sentence; each token in that union
 * is a hit only while both summaries still have an unused occurrence of it, so a token that
 * appears k times is counted at most k times overall (the "no double counting" rule of
 * ROUGE-1.5.5).
 */
function scoreSummaryLcs(referenceSentences: readonly string[][], candidateSentences: readonly string[][]): RougeScore {
  if (referenceSentences.length === 0 || candidateSentences.length === 0) return ZERO;
  const referenceTotal = referenceSentences.reduce((sum, s) => sum + s.length, 0);
  const candidateTotal = candidateSentences.reduce((sum, s) => sum + s.length, 0);
  if (referenceTotal === 0 || candidateTotal === 0) return ZERO;

  const ids = new TokenIds();
  const reference = referenceSentences.map((s) => ids.encode(s));
  const candidate = candidateSentences.map((s) => ids.encode(s));
  const unusedInReference = new Int32Array(ids.size);
  const unusedInCandidate = new Int32Array(ids.size);
  for (const sentence of reference) for (const id of sentence) unusedInReference[id]!++;
  for (const sentence of candidate) for (const id of sentence) unusedInCandidate[id]!++;

  let hits = 0;
  for (const sentence of reference) {
    const union = new Set<number>();
    for (const other of candidate) {
      for (const index of lcsReferenceIndices(sentence, other)) union.add(index);
    }
    for (const index of [...union].sort((a, b) => a - b)) {
      const id = sentence[index]!;
      if (unusedInCandidate[id]! > 0 && unusedInReference[id]! > 0) {
        hits++;
        unusedInCandidate[id]!--;
        unusedInReference[id]!--;
      }
    }
  }
  return score(hits / candidateTotal, hits / referenceTotal);
}

/**
 * ROUGE-N between a reference and a candidate (rouge-score's "rougeN"): clipped n-gram overlap.
 * @param n n-gram order, an integer >= 1 (rouge-score accepts 1..9).
 */
export function rougeN(reference: string, candidate: string, n: number, options: RougeOptions = {}): RougeScore {
  requireString(reference, "rougeN(reference)");
  requireString(candidate, "rougeN(candidate)");
  requireInteger(n, 1, "rougeN(n)");
  return scoreNgrams(rougeTokenize(reference, options), rougeTokenize(candidate, options), n);
}

/** ROUGE-1 (unigram overlap). */
export function rouge1(reference: string, candidate: string, options: RougeOptions = {}): RougeScore {
  requireString(reference, "rouge1(reference)");
  requireString(candidate, "rouge1(candidate)");
  return scoreNgrams(rougeTokenize(reference, options), rougeTokenize(candidate, options), 1);
}

/** ROUGE-2 (bigram overlap). */
export function rouge2(reference: string, candidate: string, options: RougeOptions = {}): RougeScore {
  requireString(reference, "rouge2(reference)");
  requireString(candidate, "rouge2(candidate)");
  return scoreNgrams(rougeTokenize(reference, options), rougeTokenize(candidate, options), 2);
}

/** ROUGE-L: longest common subsequence of the two token sequences (newlines are ordinary separators). */
export function rougeL(reference: string, candidate: string, options: RougeOptions = {}): RougeScore {
  requireString(reference, "rougeL(reference)");
  requireString(candidate, "rougeL(candidate)");
  return scoreLcs(rougeTokenize(reference, options), rougeTokenize(candidate, options));
}

/** ROUGE-Lsum: summary-level union LCS over sentences separated by "\n" (put one sentence per line). */
export function rougeLsum(reference: string, candidate: string, options: RougeOptions = {}): RougeScore {
  requireString(reference, "rougeLsum(reference)");
  requireString(candidate, "rougeLsum(candidate)");
  const tokenizeSentences = (text: string): string[][] =>
    splitSentences(text).map((sentence) => rougeTokenize(sentence, options));
  return scoreSummaryLcs(tokenizeSentences(reference), tokenizeSentences(candidate));
}

/**
 * All four ROUGE variants at once (tokenizes each text once for rouge1/rouge2/rougeL), equal to
 * rouge-score's `RougeScorer(["rouge1","rouge2","rougeL","rougeLsum"], use_stemmer).score(reference, candidate)`.
 * @param reference the target / ground truth text (rouge-score's first argument).
 * @param candidate the predicted text.
 */
export function rougeScores(reference: string, candidate: string, options: RougeOptions = {}): RougeScores {
  requireString(reference, "rougeScores(reference)");
  requireString(candidate, "rougeScores(candidate)");
  const referenceTokens = rougeTokenize(reference, options);
  const candidateTokens = rougeTokenize(candidate, options);
  return {
    rouge1: scoreNgrams(referenceTokens, candidateTokens, 1),
    rouge2: scoreNgrams(referenceTokens, candidateTokens, 2),
    rougeL: scoreLcs(referenceTokens, candidateTokens),
    rougeLsum: rougeLsum(reference, candidate, options),
  };
}
