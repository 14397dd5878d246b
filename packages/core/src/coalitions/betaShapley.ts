import type { CoalitionGame } from "./coalitionGame.js";
import type { CoalitionAttribution } from "./coalitionOptions.js";
import { permutationMarginals, weightedMeans } from "./permutationSampling.js";
import type { SeededRandom } from "./seededRandom.js";
import { betaPositionWeights } from "./semivalueWeights.js";

/**
 * Beta(α, β)-Shapley (Kwon & Zou, 2022) by permutation sampling: each marginal is reweighted by
 * n · p(position) so the estimate is unbiased for the semivalue; no truncation (it would bias the weights).
 */
export async function betaShapley(game: CoalitionGame, samples: number, random: SeededRandom, alpha: number, beta: number): Promise<CoalitionAttribution> {
  const n = game.n;
  const p = betaPositionWeights(n, alpha, beta);
  const r = await permutationMarginals(game, samples, random, 0);
  const { scores, stdErrors } = weightedMeans(r, n, (k) => n * p[k]!);
  return { method: "beta-shapley", scores, stdErrors, utilityCalls: game.utilityCalls, vFull: r.vFull, vEmpty: r.vEmpty, samples };
}
