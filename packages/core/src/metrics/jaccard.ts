// Jaccard similarity of two texts as SPEC section 2 defines it: |A ∩ B| / |A ∪ B| over the
// *sets* of ROUGE tokens (rouge-score's tokenizer: lower-case, runs of [a-z0-9]), so repeats
// and word order do not matter. Two texts without tokens are identical (1.0); exactly one
// without tokens shares nothing (0.0).

import { rougeTokenize, type RougeTokenizeOptions } from "./tokenize.js";
import { requireString } from "./validate.js";

export type JaccardOptions = RougeTokenizeOptions;

/** Jaccard similarity in [0, 1] of the ROUGE token sets of `a` and `b`. Symmetric. No stemmer unless asked. */
export function jaccardSimilarity(a: string, b: string, options: JaccardOptions = {}): number {
  requireString(a, "jaccardSimilarity(a)");
  requireString(b, "jaccardSimilarity(b)");
  const setA = new Set(rougeTokenize(a, options));
  const setB = new Set(rougeTokenize(b, options));
  if (setA.size === 0 && setB.size === 0) return 1.0;
  let shared = 0;
  for (const token of setA) if (setB.has(token)) shared++;
  return shared / (setA.size + setB.size - shared);
}
