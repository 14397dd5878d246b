// sacrebleu's default "13a" tokenizer (Tokenizer13a + TokenizerRegexp), the mteval-v13a.pl
// tokenization WMT uses. Steps, in sacrebleu's order:
//   1. remove "<skipped>", join lines hyphenated across "-\n", turn remaining "\n" into spaces;
//   2. only if the line contains "&": unescape &quot; &amp; &lt; &gt; (one pass each, in that
//      order, so "&amp;lt;" ends as "<" but "&amp;quot;" ends as "&quot;");
//   3. pad the line with one space on each side;
//   4. put spaces around ASCII punctuation/symbols  { | } ~ [ \ ] ^ _ ` space ! " # $ % & ( ) * + : ; < = > ? @ /
//      (note: not "'", "-", "." or ",");
//   5. split "." and "," off unless they sit between digits ("3.5" and "1,000" stay whole):
//      first when preceded by a non-digit, then when followed by a non-digit;
//   6. split "-" off when it follows a digit ("3-4" -> "3 - 4", but "well-known" stays);
//   7. collapse whitespace (Python's definition) to single spaces and trim.
// Each substitution is one left-to-right pass over non-overlapping matches, as Python's re.sub.

import { pythonSplit } from "./pythonText.js";
import { requireString } from "./validate.js";

const PUNCTUATION = /([\x7B-\x7E\x5B-\x60\x20-\x26\x28-\x2B\x3A-\x40\x2F])/g;
const PERIOD_COMMA_AFTER_NON_DIGIT = /([^0-9])([.,])/g;
const PERIOD_COMMA_BEFORE_NON_DIGIT = /([.,])([^0-9])/g;
const DASH_AFTER_DIGIT = /([0-9])(-)/g;

/**
 * Tokenizes one segment like sacrebleu's `Tokenizer13a()(line)` and returns the tokens joined
 * by single spaces. (BLEU additionally strips trailing whitespace first; see bleu.ts.)
 */
export function tokenize13a(line: string): string {
  requireString(line, "tokenize13a(line)");
  let text = line.replaceAll("<skipped>", "").replaceAll("-\n", "").replaceAll("\n", " ");
  if (text.includes("&")) {
    text = text
      .replaceAll("&quot;", '"')
      .replaceAll("&amp;", "&")
      .replaceAll("&lt;", "<")
      .replaceAll("&gt;", ">");
  }
  text = ` ${text} `
    .replace(PUNCTUATION, " $1 ")
    .replace(PERIOD_COMMA_AFTER_NON_DIGIT, "$1 $2 ")
    .replace(PERIOD_COMMA_BEFORE_NON_DIGIT, " $1 $2")
    .replace(DASH_AFTER_DIGIT, "$1 $2 ");
  return pythonSplit(text).join(" ");
}
