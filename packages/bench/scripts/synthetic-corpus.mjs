// The benchmarks' synthetic corpus: a Zipf-distributed vocabulary of 20,000 made-up words (a few very common,
// most rare, like real text, so BM25 postings and dense neighbourhoods have realistic sizes without shipping
// any corpus), running text with function words, and question-like queries. Deterministic for a seed.

const SYLLABLES = ["ac", "al", "ben", "car", "de", "eth", "fil", "gen", "hyd", "io", "ket", "lin", "met", "nit", "ox", "pro", "qua", "rin", "sul", "tri", "ur", "vin", "xyl", "zo"];
const VOCAB = Array.from({ length: 20000 }, (_, i) => {
  let w = "";
  for (let n = i + 1; n > 0; n = Math.floor(n / SYLLABLES.length)) w += SYLLABLES[n % SYLLABLES.length];
  return w;
});
const ZIPF_CDF = (() => {
  const cdf = [];
  let total = 0;
  for (let r = 1; r <= VOCAB.length; r++) cdf.push((total += 1 / r));
  return cdf.map((x) => x / total);
})();
// Running text has function words about a third of the time; questions have them too, and they are what
// makes a BM25 query touch most of the corpus.
const FUNCTION_WORDS = "the of and to in is was for with at by from as on that which what how are be were this an or into".split(" ");

/** Generators over one seeded stream: call them in the same order and the corpus is the same. */
export function syntheticCorpus(seed = 12345, docChars = 4000) {
  // A Weyl sequence through a 32-bit integer mix, all in exact integer arithmetic. (The LCG this replaced
  // multiplied in doubles past 2^53, lost its low bits and cycled after 16,403 draws: a "million-chunk"
  // corpus was 97 documents repeated, so every BM25 top k was thousands of exact ties.)
  let state = seed >>> 0;
  const rand = () => {
    state = (state + 0x9e3779b9) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return ((z ^ (z >>> 16)) >>> 0) / 4294967296;
  };
  const word = () => {
    const u = rand();
    let lo = 0;
    let hi = ZIPF_CDF.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ZIPF_CDF[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return VOCAB[lo];
  };
  const textWord = () => (rand() < 0.35 ? FUNCTION_WORDS[Math.floor(rand() * FUNCTION_WORDS.length)] : word());
  const sentence = () => Array.from({ length: 8 + Math.floor(rand() * 10) }, textWord).join(" ") + ".";
  /** A document of about docChars characters (4000: about 4 chunks of ≤ 1000 characters). */
  const document = (i) => {
    let text = "";
    while (text.length < docChars) text += `${sentence()} ${text.length % 5 === 0 ? "\n\n" : ""}`;
    return { id: `doc-${i}`, title: `Document ${i}`, text, source: "bench", license: "CC0-1.0" };
  };
  /** Six corpus words. */
  const words = () => Array.from({ length: 6 }, word).join(" ");
  /** A question as people write one: "what is the" and nine words of running text. */
  const question = () => {
    const out = ["what", "is", "the"];
    for (let j = 0; j < 9; j++) out.push(textWord());
    return out.join(" ") + "?";
  };
  return { word, textWord, document, words, question };
}

/** A fast hashed bag-of-words embedding (FNV-1a per word), L2-normalised: the store's cost without a model's. */
export function hashedEmbed(text, dims) {
  const v = new Float32Array(dims);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 0x811c9dc5;
    for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193) >>> 0;
    v[h % dims] += h & 1 ? 1 : -1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}
