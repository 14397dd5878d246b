import type { CoalitionGame } from "./coalitionGame.js";
import type { SeededRandom } from "./seededRandom.js";

export interface PermutationMarginals {
  readonly vFull: number;
  readonly vEmpty: number;
  /** Per permutation: the players in order and each one's marginal contribution where it joined. */
  readonly permutations: readonly (readonly number[])[];
  readonly marginals: readonly (readonly number[])[];
}

/**
 * Walks `count` random permutations, all in lockstep so that each position is one batch for the engine:
 * marginal of π[k] = v({π[0..k]}) − v({π[0..k−1]}). A permutation whose prefix value is within
 * truncation · |v(N) − v(∅)| of v(N) stops there (Ghorbani & Zou's TMC): its later players get 0.
 */
export async function permutationMarginals(game: CoalitionGame, count: number, random: SeededRandom, truncation: number): Promise<PermutationMarginals> {
  const n = game.n;
  const [vEmpty, vFull] = await game.values([[], game.all]);
  const permutations = Array.from({ length: count }, () => random.permutation(n));
  const marginals = permutations.map(() => new Array<number>(n).fill(0));
  const previous = new Array<number>(count).fill(vEmpty!);
  const tolerance = truncation * Math.abs(vFull! - vEmpty!);
  for (let k = 0; k < n; k++) {
    const active = permutations.map((_, p) => p).filter((p) => truncation === 0 || Math.abs(vFull! - previous[p]!) > tolerance);
    if (active.length === 0) break;
    const values = await game.values(active.map((p) => permutations[p]!.slice(0, k + 1).sort((a, b) => a - b)));
    active.forEach((p, i) => {
      marginals[p]![k] = values[i]! - previous[p]!;
      previous[p] = values[i]!;
    });
  }
  return { vFull: vFull!, vEmpty: vEmpty!, permutations, marginals };
}

/**
 * φ_i ≈ mean over permutations of weight(position of i) · marginal of i, with its standard error. Positions
 * are uniform under random permutations, so weight(j) = n · p(j) turns them into any semivalue's p.
 */
export function weightedMeans(r: PermutationMarginals, n: number, weightOfPosition: (k: number) => number): { scores: number[]; stdErrors: number[] } {
  const sums = new Array<number>(n).fill(0);
  const squares = new Array<number>(n).fill(0);
  r.permutations.forEach((perm, p) => {
    perm.forEach((player, k) => {
      const x = weightOfPosition(k) * r.marginals[p]![k]!;
      sums[player]! += x;
      squares[player]! += x * x;
    });
  });
  const m = r.permutations.length;
  const scores = sums.map((s) => s / m);
  const stdErrors = squares.map((q, i) => (m < 2 ? Number.NaN : Math.sqrt(Math.max(0, (q - m * scores[i]! ** 2) / (m - 1)) / m)));
  return { scores, stdErrors };
}
