// A synthetic corpus with a Zipf vocabulary and English function words, and queries over it: bare corpus
// words and questions as people write them (the common words are what make BM25 pruning matter).

export { rng } from "./syntheticDocs.mjs";

const FUNCTION_WORDS = "the of and to in is was for with at by from as on that which what how are be were this an or into".split(" ");
const SYLLABLES = ["ac", "al", "ben", "car", "de", "eth", "fil", "gen", "hyd", "io", "ket", "lin", "met", "nit", "ox", "pro"];
const VOCAB = Array.from({ length: 3000 }, (_, i) => {
  let w = "";
  for (let n = i + 1; n > 0; n = Math.floor(n / SYLLABLES.length)) w += SYLLABLES[n % SYLLABLES.length];
  return w;
});

export function zipfWord(rand: () => number): string {
  // Inverse of a continuous 1/r law over the vocabulary: a few words everywhere, most rare.
  const r = Math.floor(Math.exp(rand() * Math.log(VOCAB.length)));
  return VOCAB[Math.min(VOCAB.length - 1, r - 1)]!;
}

export function syntheticText(rand: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(rand() < 0.35 ? FUNCTION_WORDS[Math.floor(rand() * FUNCTION_WORDS.length)]! : zipfWord(rand));
  return out.join(" ") + ".";
}

/** Questions as people write them (function words, common and rare words) beside bare 6-word queries. */
export function queries(rand: () => number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => {
    if (i % 2 === 0) return Array.from({ length: 6 }, () => zipfWord(rand)).join(" ");
    const words = ["What", "is", "the"];
    for (let j = 0; j < 8; j++) words.push(rand() < 0.4 ? FUNCTION_WORDS[Math.floor(rand() * FUNCTION_WORDS.length)]! : zipfWord(rand));
    return words.join(" ") + "?";
  });
}
