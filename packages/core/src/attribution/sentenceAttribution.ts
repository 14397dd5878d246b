// Sentence-level attribution: which set shaped which sentence. Leave-one-out on the log-probability of each
// sentence's tokens (A_full teacher-forced after every prompt with one set left out), beside the sentence's
// log-probability under the full prompt and under no context at all.
import { answerSentences } from "./answerSentences.js";

/** A set supports a sentence when leaving it out lowers the sentence's log-probability by more than this (nats). */
export const DEFAULT_SENTENCE_THRESHOLD = 1.0;
/** Sets named per sentence (largest drops first). */
export const MAX_TOP_SETS = 3;

export interface AnswerTokenScores {
  /** UTF-16 offset in the answer text where each token's text begins. */
  readonly tokenOffsets: ArrayLike<number>;
  /** log P(token | full prompt). */
  readonly full: ArrayLike<number>;
  /** log P(token | prompt without any set). */
  readonly noContext: ArrayLike<number>;
  /** Per set, log P(token | prompt without that set). */
  readonly withoutSet: readonly ArrayLike<number>[];
}

export interface SentenceAttribution {
  readonly start: number;
  readonly end: number;
  readonly text: string;
  /** Answer tokens that fall in the sentence. */
  readonly tokens: number;
  readonly logProbFull: number;
  readonly logProbNoContext: number;
  /** Per set: logProbFull − log P(sentence | prompt without the set). */
  readonly drops: number[];
  /** Sets whose drop exceeds the threshold, largest first (at most MAX_TOP_SETS). */
  readonly topSets: number[];
  /** Some set's drop exceeds the threshold. */
  readonly supported: boolean;
}

/**
 * The sentence each token belongs to (-1: none). A token belongs to the sentence holding its first
 * non-whitespace character; a token with no text of its own (its bytes are shown with the next token's)
 * goes with the next token; whitespace between sentences belongs to none.
 */
export function tokenSentences(text: string, tokenOffsets: ArrayLike<number>, spans: readonly { start: number; end: number }[]): number[] {
  const n = tokenOffsets.length;
  const out = new Array<number>(n).fill(-1);
  let next = -1;
  for (let i = n - 1; i >= 0; i--) {
    const from = Math.min(tokenOffsets[i]!, text.length);
    const to = i + 1 < n ? Math.min(tokenOffsets[i + 1]!, text.length) : text.length;
    if (to <= from) {
      out[i] = from >= text.length ? -1 : next;
      continue;
    }
    let at = from;
    while (at < to && /\s/.test(text[at]!)) at++;
    out[i] = at < to ? spans.findIndex((s) => s.start <= at && at < s.end) : -1;
    next = out[i]!;
  }
  return out;
}

/** Per sentence of `text`: its log-probabilities, each set's drop, the sets above `threshold`. */
export function attributeSentences(text: string, scores: AnswerTokenScores, threshold = DEFAULT_SENTENCE_THRESHOLD): SentenceAttribution[] {
  const n = scores.tokenOffsets.length;
  for (const [name, v] of [["full", scores.full], ["noContext", scores.noContext], ...scores.withoutSet.map((w, j) => [`withoutSet[${j}]`, w] as const)] as const) {
    if (v.length !== n) throw new Error(`sentence attribution: ${name} has ${v.length} log-probabilities for ${n} tokens`);
  }
  if (!(threshold >= 0) || !Number.isFinite(threshold)) throw new Error(`sentence attribution: the threshold must be a finite number ≥ 0, got ${threshold}`);
  const spans = answerSentences(text);
  const owner = tokenSentences(text, scores.tokenOffsets, spans);
  const sum = (v: ArrayLike<number>, k: number) => owner.reduce((acc, s, i) => (s === k ? acc + v[i]! : acc), 0);
  return spans.map((span, k) => {
    const logProbFull = sum(scores.full, k);
    const drops = scores.withoutSet.map((w) => logProbFull - sum(w, k));
    const topSets = drops
      .map((d, j) => [d, j] as const)
      .filter(([d]) => d > threshold)
      .sort((a, b) => b[0] - a[0] || a[1] - b[1])
      .slice(0, MAX_TOP_SETS)
      .map(([, j]) => j);
    return {
      start: span.start,
      end: span.end,
      text: span.text,
      tokens: owner.filter((s) => s === k).length,
      logProbFull,
      logProbNoContext: sum(scores.noContext, k),
      drops,
      topSets,
      supported: topSets.length > 0,
    };
  });
}
