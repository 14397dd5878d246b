import type { CoalitionGame } from "./coalitionGame.js";
import type { CoalitionAttribution } from "./coalitionOptions.js";
import { permutationMarginals, weightedMeans } from "./permutationSampling.js";
import type { SeededRandom } from "./seededRandom.js";

/** Truncated Monte Carlo Shapley (Ghorbani & Zou, 2019): the mean marginal over `samples` permutations. */
export async function tmcShapley(game: CoalitionGame, samples: number, random: SeededRandom, truncation: number): Promise<CoalitionAttribution> {
  const r = await permutationMarginals(game, samples, random, truncation);
  const { scores, stdErrors } = weightedMeans(r, game.n, () => 1);
  return { method: "tmc-shapley", scores, stdErrors, utilityCalls: game.utilityCalls, vFull: r.vFull, vEmpty: r.vEmpty, samples };
}
