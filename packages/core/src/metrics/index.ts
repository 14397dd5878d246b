// Public API of the text-similarity metrics (pure functions, no I/O).

export { rougeTokenize, type RougeTokenizeOptions } from "./tokenize.js";
export { porterStem } from "./porterStemmer.js";
export {
  rougeScores,
  rougeN,
  rouge1,
  rouge2,
  rougeL,
  rougeLsum,
  type RougeScore,
  type RougeScores,
  type RougeOptions,
} from "./rouge.js";
export { tokenize13a } from "./tokenize13a.js";
export {
  corpusBleu,
  sentenceBleu,
  type BleuOptions,
  type BleuResult,
  type BleuSmoothMethod,
} from "./bleu.js";
export { jaccardSimilarity, type JaccardOptions } from "./jaccard.js";
export { cosineSimilarity, type NumericVector } from "./cosine.js";
