// rouge-score's DefaultTokenizer (rouge_score/tokenize.py), which ROUGE and our Jaccard use:
//   1. lower-case the whole text (Python str.lower());
//   2. replace every run of characters outside [a-z0-9] with one space, so accented letters,
//      CJK, emoji, punctuation and "3.5" all become separators ("é" splits "café" into "caf");
//   3. split on whitespace;
//   4. with the stemmer on, stem only tokens longer than 3 characters (NLTK Porter, default mode);
//   5. drop anything that is not a non-empty [a-z0-9]+ token.
// Lower-casing is the only Unicode-sensitive step, and the only characters whose lower case
// contains [a-z0-9] besides A-Z are U+0130 "İ" (-> "i" + combining dot, so "İstanbul" gives
// "i", "stanbul") and U+212A KELVIN SIGN (-> "k"); JavaScript's toLowerCase() maps both exactly
// as Python 3.11 does (verified over every code point when the fixtures were generated).

import { porterStem } from "./porterStemmer.js";
import { requireString } from "./validate.js";

export interface RougeTokenizeOptions {
  /** Apply NLTK's Porter stemmer to tokens longer than 3 characters (rouge-score's use_stemmer). Default false. */
  readonly stemmer?: boolean;
}

// Stemming is pure, and answers repeat the same words, so memoising is safe and saves most of
// the stemming time. rouge-score itself does not cache; the cap only bounds memory.
const STEM_CACHE_LIMIT = 50_000;
const stemCache = new Map<string, string>();

function cachedStem(word: string): string {
  let stem = stemCache.get(word);
  if (stem === undefined) {
    stem = porterStem(word);
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
    stemCache.set(word, stem);
  }
  return stem;
}

const NON_ALPHANUMERIC_RUN = /[^a-z0-9]+/g;
const VALID_TOKEN = /^[a-z0-9]+$/;

/**
 * Splits `text` into ROUGE tokens exactly like rouge-score's default tokenizer.
 * @example rougeTokenize("The café's 3.5 mL") // ["the", "caf", "s", "3", "5", "ml"]
 */
export function rougeTokenize(text: string, options: RougeTokenizeOptions = {}): string[] {
  requireString(text, "rougeTokenize(text)");
  const stem = options.stemmer === true;
  const tokens: string[] = [];
  for (const word of text.toLowerCase().replace(NON_ALPHANUMERIC_RUN, " ").split(" ")) {
    if (word === "") continue;
    const token = stem && word.length > 3 ? cachedStem(word) : word;
    if (VALID_TOKEN.test(token)) tokens.push(token);
  }
  return tokens;
}
