// The Porter stemmer exactly as NLTK's `PorterStemmer()` runs it in its default mode,
// NLTK_EXTENSIONS. That is the stemmer rouge-score's DefaultTokenizer builds
// (`porter.PorterStemmer()`, no mode argument), so ROUGE with `stemmer: true` only matches
// rouge-score if every deviation NLTK makes from Porter's 1980 paper is reproduced here:
//   - a small table of irregular forms is looked up before any rule (sky/skies, dying, news, ...);
//   - words of at most 2 characters are returned (lower-cased) untouched;
//   - step 1a: a 4-letter word ending in "ies" keeps "ie" (dies -> die, but flies -> fli);
//   - step 1b: "ied" -> "ie" for 4-letter words, else "i" (died -> die, spied -> spi);
//   - step 1c: y -> i only after a consonant that is not the first letter (happy -> happi, enjoy, sky);
//   - step 2: "alli" -> "al" is tried first and step 2 re-run; "bli" -> "ble" (not "abli");
//     extra rules "fulli" -> "ful" and "logi" -> "log" (measured on the stem plus the "l");
//   - *o (ends consonant-vowel-consonant) also holds for a 2-letter vowel-consonant stem.
// Checked against nltk 3.10.3 on the word list in test/metrics/fixtures (see tools/reference).

import { codePointLength } from "./pythonText.js";
import { requireString } from "./validate.js";

const VOWELS = new Set(["a", "e", "i", "o", "u"]);

/** Irregular forms (word -> stem) looked up before any rule runs. */
const IRREGULAR_FORMS: ReadonlyMap<string, string> = new Map([
  ["sky", "sky"],
  ["skies", "sky"],
  ["dying", "die"],
  ["lying", "lie"],
  ["tying", "tie"],
  ["news", "news"],
  ["innings", "inning"],
  ["inning", "inning"],
  ["outings", "outing"],
  ["outing", "outing"],
  ["cannings", "canning"],
  ["canning", "canning"],
  ["howe", "howe"],
  ["proceed", "proceed"],
  ["exceed", "exceed"],
  ["succeed", "succeed"],
]);

/**
 * For each character: is it a consonant in Porter's sense? A letter other than a, e, i, o, u,
 * except that "y" is a consonant only at the start of the word or after a vowel. Any other
 * character (digits, non-ASCII letters) counts as a consonant, as it does in NLTK.
 */
function consonantFlags(word: string): boolean[] {
  const flags: boolean[] = [];
  for (let i = 0; i < word.length; i++) {
    const char = word.charAt(i);
    if (VOWELS.has(char)) flags.push(false);
    else if (char === "y") flags.push(i === 0 ? true : !flags[i - 1]);
    else flags.push(true);
  }
  return flags;
}

function isConsonantAt(word: string, index: number): boolean {
  return consonantFlags(word.slice(0, index + 1))[index] === true;
}

/** Porter's m: the number of vowel-run -> consonant-run transitions in [C](VC){m}[V]. */
function measure(stem: string): number {
  const flags = consonantFlags(stem);
  let m = 0;
  for (let i = 1; i < flags.length; i++) {
    if (!flags[i - 1] && flags[i]) m++;
  }
  return m;
}

function hasPositiveMeasure(stem: string): boolean {
  return measure(stem) > 0;
}

function containsVowel(stem: string): boolean {
  return consonantFlags(stem).some((isConsonant) => !isConsonant);
}

/** Porter's *d: ends with two identical consonants. */
function endsDoubleConsonant(word: string): boolean {
  const n = word.length;
  return n >= 2 && word.charAt(n - 1) === word.charAt(n - 2) && isConsonantAt(word, n - 1);
}

/** Porter's *o (consonant-vowel-consonant, last not w/x/y), plus NLTK's 2-letter vowel-consonant case. */
function endsCvc(word: string): boolean {
  const n = word.length;
  if (n >= 3) {
    const flags = consonantFlags(word);
    if (flags[n - 3] && !flags[n - 2] && flags[n - 1] && !"wxy".includes(word.charAt(n - 1))) {
      return true;
    }
  }
  if (n === 2) {
    const flags = consonantFlags(word);
    return !flags[0] && flags[1] === true;
  }
  return false;
}

interface Rule {
  readonly suffix: string;
  readonly replacement: string;
  /** Condition on the word with the suffix removed; absent = unconditional. */
  readonly when?: (stem: string) => boolean;
  /** Rule matches any double consonant ending instead of a literal suffix (step 1b's *d). */
  readonly doubleConsonant?: boolean;
}

/** Builds a rule list from (suffix, replacement) pairs sharing one condition. */
function rulesWith(when: (stem: string) => boolean, pairs: ReadonlyArray<readonly [string, string]>): Rule[] {
  return pairs.map(([suffix, replacement]) => ({ suffix, replacement, when }));
}

function dropSuffix(word: string, suffixLength: number): string {
  return word.slice(0, word.length - suffixLength);
}

/**
 * Applies the first rule whose suffix matches. Porter's rule lists are "first match decides":
 * once a suffix matches, a failing condition leaves the word unchanged instead of trying the
 * next rule; that is what keeps "caress" whole in step 1a ("ss" matches before "s").
 */
function applyFirstMatchingRule(word: string, rules: readonly Rule[]): string {
  for (const rule of rules) {
    // NLTK encodes the double-consonant rule as the pseudo-suffix "*d" and, when the word does
    // not end in a double consonant, still compares that literal "*d" against the word's end.
    // Only reachable for input containing "*", but kept so arbitrary strings stem identically.
    if (rule.doubleConsonant && endsDoubleConsonant(word)) {
      const stem = dropSuffix(word, 2);
      return !rule.when || rule.when(stem) ? stem + rule.replacement : word;
    }
    if (word.endsWith(rule.suffix)) {
      const stem = dropSuffix(word, rule.suffix.length);
      return !rule.when || rule.when(stem) ? stem + rule.replacement : word;
    }
  }
  return word;
}

function step1a(word: string): string {
  if (word.endsWith("ies") && word.length === 4) return dropSuffix(word, 3) + "ie";
  return applyFirstMatchingRule(word, [
    { suffix: "sses", replacement: "ss" },
    { suffix: "ies", replacement: "i" },
    { suffix: "ss", replacement: "ss" },
    { suffix: "s", replacement: "" },
  ]);
}

function step1b(word: string): string {
  if (word.endsWith("ied")) return dropSuffix(word, 3) + (word.length === 4 ? "ie" : "i");

  if (word.endsWith("eed")) {
    const stem = dropSuffix(word, 3);
    return measure(stem) > 0 ? stem + "ee" : word;
  }

  let stem: string | undefined;
  for (const suffix of ["ed", "ing"]) {
    if (word.endsWith(suffix)) {
      const candidate = dropSuffix(word, suffix.length);
      if (containsVowel(candidate)) {
        stem = candidate;
        break;
      }
    }
  }
  if (stem === undefined) return word;

  // After removing -ed/-ing, restore an "e" or undouble a final consonant so that later
  // steps see "conflate", "hop", "file" rather than "conflat", "hopp", "fil".
  const last = stem.charAt(stem.length - 1);
  return applyFirstMatchingRule(stem, [
    { suffix: "at", replacement: "ate" },
    { suffix: "bl", replacement: "ble" },
    { suffix: "iz", replacement: "ize" },
    { suffix: "*d", replacement: last, when: () => !"lsz".includes(last), doubleConsonant: true },
    { suffix: "", replacement: "e", when: (s) => measure(s) === 1 && endsCvc(s) },
  ]);
}

function step1c(word: string): string {
  return applyFirstMatchingRule(word, [
    {
      suffix: "y",
      replacement: "i",
      when: (stem) => stem.length > 1 && isConsonantAt(stem, stem.length - 1),
    },
  ]);
}

const STEP2_RULES: readonly Rule[] = rulesWith(hasPositiveMeasure, [
  ["ational", "ate"],
  ["tional", "tion"],
  ["enci", "ence"],
  ["anci", "ance"],
  ["izer", "ize"],
  ["bli", "ble"],
  ["alli", "al"],
  ["entli", "ent"],
  ["eli", "e"],
  ["ousli", "ous"],
  ["ization", "ize"],
  ["ation", "ate"],
  ["ator", "ate"],
  ["alism", "al"],
  ["iveness", "ive"],
  ["fulness", "ful"],
  ["ousness", "ous"],
  ["aliti", "al"],
  ["iviti", "ive"],
  ["biliti", "ble"],
  ["fulli", "ful"],
]);

function step2(word: string): string {
  if (word.endsWith("alli") && hasPositiveMeasure(dropSuffix(word, 4))) {
    return step2(dropSuffix(word, 4) + "al");
  }
  // "logi" -> "log" measures the stem *including* the "l", so short stems like "geo" qualify.
  const logi: Rule = { suffix: "logi", replacement: "log", when: () => hasPositiveMeasure(dropSuffix(word, 3)) };
  return applyFirstMatchingRule(word, [...STEP2_RULES, logi]);
}

const STEP3_RULES: readonly Rule[] = rulesWith(hasPositiveMeasure, [
  ["icate", "ic"],
  ["ative", ""],
  ["alize", "al"],
  ["iciti", "ic"],
  ["ical", "ic"],
  ["ful", ""],
  ["ness", ""],
]);

function step3(word: string): string {
  return applyFirstMatchingRule(word, STEP3_RULES);
}

const measureAbove1 = (stem: string): boolean => measure(stem) > 1;

const STEP4_RULES: readonly Rule[] = [
  "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion",
  "ou", "ism", "ate", "iti", "ous", "ive", "ize",
].map((suffix) => ({
  suffix,
  replacement: "",
  // -ion is only removed after s or t (adoption -> adopt, but not onion).
  when: suffix === "ion" ? (stem: string) => measureAbove1(stem) && /[st]$/.test(stem) : measureAbove1,
}));

function step4(word: string): string {
  return applyFirstMatchingRule(word, STEP4_RULES);
}

function step5a(word: string): string {
  // Both conditions are tried for the same suffix (unlike the first-match rule lists).
  if (!word.endsWith("e")) return word;
  const stem = dropSuffix(word, 1);
  const m = measure(stem);
  if (m > 1 || (m === 1 && !endsCvc(stem))) return stem;
  return word;
}

function step5b(word: string): string {
  return word.endsWith("ll") && measure(dropSuffix(word, 1)) > 1 ? dropSuffix(word, 1) : word;
}

function stemLowercased(word: string): string {
  return step5b(step5a(step4(step3(step2(step1c(step1b(step1a(word))))))));
}

const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * NLTK indexes words by code point, JavaScript by UTF-16 unit. The rules inspect single
 * characters (last letter, double consonant, cvc), so an emoji or other astral character must
 * count as one letter. Each distinct astral character is swapped for an unused private-use BMP
 * character (a consonant, like any non-vowel) while stemming and swapped back afterwards.
 */
function withAstralAsSingleUnits(word: string, stem: (w: string) => string): string {
  if (!SURROGATE.test(word)) return stem(word);
  const toStandIn = new Map<string, string>();
  const fromStandIn = new Map<string, string>();
  let next = 0xe000;
  let narrowed = "";
  for (const char of word) {
    if (char.length === 1) {
      narrowed += char;
      continue;
    }
    let standIn = toStandIn.get(char);
    if (standIn === undefined) {
      while (word.includes(String.fromCharCode(next))) next++;
      if (next > 0xf8ff) throw new RangeError("porterStem: too many distinct astral characters in one word.");
      standIn = String.fromCharCode(next++);
      toStandIn.set(char, standIn);
      fromStandIn.set(standIn, char);
    }
    narrowed += standIn;
  }
  let restored = "";
  for (const char of stem(narrowed)) restored += fromStandIn.get(char) ?? char;
  return restored;
}

/**
 * Stems one word like NLTK's `PorterStemmer().stem(word)` (NLTK_EXTENSIONS mode, lower-cases
 * its input). Pure and deterministic. Lower-casing uses JavaScript's `toLowerCase()`, which
 * equals Python's `str.lower()` except for letters added to Unicode after Python 3.11's
 * Unicode 14 (irrelevant for ROUGE, whose tokens are ASCII).
 */
export function porterStem(word: string): string {
  requireString(word, "porterStem(word)");
  const lower = word.toLowerCase();
  const irregular = IRREGULAR_FORMS.get(lower);
  if (irregular !== undefined) return irregular;
  // NLTK checks the length of the word as given, before lower-casing (which can lengthen it).
  if (codePointLength(word) <= 2) return lower;
  return withAstralAsSingleUnits(lower, stemLowercased);
}
