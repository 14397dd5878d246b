import type { Coalition, CoalitionGame } from "./coalitionGame.js";
import type { CoalitionAttribution } from "./coalitionOptions.js";
import { lasso } from "./lasso.js";
import { spearman } from "./rankCorrelation.js";
import type { SeededRandom } from "./seededRandom.js";

/**
 * ContextCite (Cohen-Wang et al., 2024): score `samples` random ablations (each set kept with probability
 * 1/2), fit a sparse linear surrogate v(S) ≈ w₀ + Σ_{i∈S} w_i with the lasso, and report w as the scores.
 * One fifth of the ablations (when there are at least 10) is held out first to report the surrogate's
 * linear datamodeling score (LDS: Spearman of predicted against actual v on unseen ablations); the
 * reported weights are then refitted on all of them.
 */
export async function contextCite(game: CoalitionGame, samples: number, random: SeededRandom, lassoRatio: number): Promise<CoalitionAttribution> {
  const n = game.n;
  const masks: number[][] = Array.from({ length: samples }, () => Array.from({ length: n }, () => (random.next() < 0.5 ? 1 : 0)));
  const coalitions: Coalition[] = masks.map((mask) => mask.flatMap((bit, i) => (bit ? [i] : [])));
  const values = await game.values(coalitions);
  let lds: number | undefined;
  const heldOut = samples >= 10 ? Math.floor(samples / 5) : 0;
  if (heldOut > 0) {
    const train = samples - heldOut;
    const fit = lasso(masks.slice(0, train), values.slice(0, train), lassoRatio);
    const predicted = masks.slice(train).map((mask) => fit.intercept + mask.reduce((s, bit, i) => s + bit * fit.weights[i]!, 0));
    const l = spearman(predicted, values.slice(train));
    lds = Number.isNaN(l) ? undefined : l;
  }
  const fit = lasso(masks, values, lassoRatio);
  return { method: "contextcite", scores: fit.weights, utilityCalls: game.utilityCalls, samples, ...(lds === undefined ? {} : { lds }) };
}
