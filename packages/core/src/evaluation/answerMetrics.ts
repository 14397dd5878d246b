// Table I's seven scores of one answer against the gold answer. Pure: the caller embeds the two texts for
// cosine (the same sentence embedder the attribution's cosine uses).
import { cosineSimilarity, type NumericVector } from "../metrics/cosine.js";
import { jaccardSimilarity } from "../metrics/jaccard.js";
import { rougeScores } from "../metrics/rouge.js";
import { sentenceBleu } from "../metrics/bleu.js";

export const ANSWER_METRICS = ["cosine", "bleu", "jaccard", "rouge1", "rouge2", "rougeL", "rougeLsum"] as const;
export type AnswerMetric = (typeof ANSWER_METRICS)[number];
export type AnswerScores = Record<AnswerMetric, number>;

/**
 * Scores `answer` against `reference` (the gold answer). ROUGE is F1 (rouge-score, no stemmer); BLEU is
 * sacrebleu's sentence BLEU divided by 100, so it lies in [0, 1] like the others, as in the paper's Table I
 * (cosine alone can be negative).
 * Cosine comes from the two embeddings; an empty answer has nothing to embed and scores 0 on it.
 */
export function scoreAnswer(answer: string, reference: string, vectors: { answer: NumericVector; reference: NumericVector }): AnswerScores {
  const rouge = rougeScores(reference, answer);
  return {
    cosine: answer.trim() === "" ? 0 : cosineSimilarity(vectors.answer, vectors.reference),
    bleu: sentenceBleu(answer, reference).score / 100,
    jaccard: jaccardSimilarity(reference, answer),
    rouge1: rouge.rouge1.fmeasure,
    rouge2: rouge.rouge2.fmeasure,
    rougeL: rouge.rougeL.fmeasure,
    rougeLsum: rouge.rougeLsum.fmeasure,
  };
}
