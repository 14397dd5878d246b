/**
 * Ranking metrics over a ranked list of ids (best first) against the relevant ids. Duplicates in the
 * ranking count once, at their first position, because retrieval at chunk level often returns several
 * chunks of one document and document-level evaluation must not reward that.
 * Grades: a Map gives graded relevance (used by nDCG); a Set means every listed id has grade 1.
 */
export type Relevance = ReadonlySet<string> | ReadonlyMap<string, number>;

export function dedupeRanking(ranked: readonly string[]): string[] {
  return [...new Set(ranked)];
}

function grade(relevant: Relevance, id: string): number {
  if (relevant instanceof Map) return relevant.get(id) ?? 0;
  return (relevant as ReadonlySet<string>).has(id) ? 1 : 0;
}

function relevantCount(relevant: Relevance): number {
  if (relevant instanceof Map) return [...relevant.values()].filter((g) => g > 0).length;
  return relevant.size;
}

function checkK(name: string, k: number): void {
  if (!Number.isInteger(k) || k < 1) throw new RangeError(`${name}: k must be an integer ≥ 1, got ${k}`);
}

function checkHasRelevant(name: string, relevant: Relevance): void {
  if (relevantCount(relevant) === 0) {
    throw new RangeError(`${name}: undefined without relevant ids; leave questions without gold ids out of the average`);
  }
}

/** Fraction of the top k (k, not the list length: a short list is penalised) that is relevant. */
export function precisionAtK(ranked: readonly string[], relevant: Relevance, k: number): number {
  checkK("precisionAtK", k);
  const top = dedupeRanking(ranked).slice(0, k);
  return top.filter((id) => grade(relevant, id) > 0).length / k;
}

/** Fraction of the relevant ids found in the top k. */
export function recallAtK(ranked: readonly string[], relevant: Relevance, k: number): number {
  checkK("recallAtK", k);
  checkHasRelevant("recallAtK", relevant);
  const top = dedupeRanking(ranked).slice(0, k);
  return top.filter((id) => grade(relevant, id) > 0).length / relevantCount(relevant);
}

/** 1 / rank of the first relevant id (0 when none is ranked); optionally only within the top k. */
export function reciprocalRank(ranked: readonly string[], relevant: Relevance, k = Number.POSITIVE_INFINITY): number {
  checkHasRelevant("reciprocalRank", relevant);
  const list = dedupeRanking(ranked);
  const limit = Math.min(list.length, k);
  for (let i = 0; i < limit; i++) if (grade(relevant, list[i]!) > 0) return 1 / (i + 1);
  return 0;
}

/** Mean of reciprocal ranks over queries (MRR). */
export function meanReciprocalRank(
  queries: readonly { ranked: readonly string[]; relevant: Relevance }[],
  k = Number.POSITIVE_INFINITY,
): number {
  if (queries.length === 0) throw new RangeError("meanReciprocalRank: no queries");
  return queries.reduce((s, q) => s + reciprocalRank(q.ranked, q.relevant, k), 0) / queries.length;
}

export type GainKind = "linear" | "exponential";

/**
 * nDCG@k with graded relevance: DCG = Σ gain(rel_i) / log2(i + 1) over positions i = 1..k, normalised by
 * the DCG of the ideal ordering of all graded ids. `linear` gain is rel (trec_eval's default);
 * `exponential` is 2^rel − 1 (Burges et al.), which rewards highly relevant ids more.
 */
export function ndcgAtK(ranked: readonly string[], relevant: Relevance, k: number, gain: GainKind = "linear"): number {
  checkK("ndcgAtK", k);
  checkHasRelevant("ndcgAtK", relevant);
  const g = gain === "linear" ? (r: number) => r : (r: number) => 2 ** r - 1;
  const dcg = dedupeRanking(ranked)
    .slice(0, k)
    .reduce((s, id, i) => s + g(grade(relevant, id)) / Math.log2(i + 2), 0);
  const grades =
    relevant instanceof Map ? [...relevant.values()] : [...(relevant as ReadonlySet<string>)].map(() => 1);
  const ideal = grades
    .filter((r) => r > 0)
    .sort((a, b) => b - a)
    .slice(0, k)
    .reduce((s, r, i) => s + g(r) / Math.log2(i + 2), 0);
  return dcg / ideal;
}
