import { betaShapley } from "./betaShapley.js";
import { CoalitionGame, type Utility } from "./coalitionGame.js";
import {
  checkCoalitionOptions,
  DEFAULT_BETA,
  DEFAULT_LASSO_RATIO,
  DEFAULT_SAMPLES,
  DEFAULT_TRUNCATION,
  type CoalitionAttribution,
  type CoalitionOptions,
} from "./coalitionOptions.js";
import { contextCite } from "./contextCite.js";
import { exactShapley } from "./exactSemivalue.js";
import { kernelShap } from "./kernelShap.js";
import { leaveOneOut } from "./leaveOneOut.js";
import { SeededRandom } from "./seededRandom.js";
import { tmcShapley } from "./tmcShapley.js";

/**
 * Attributes the answer to the n chunk sets with a coalition method. Pure: every v(C) comes from the
 * utility callback (the engine's batched teacher-forced scoring, or a constructed game in tests), each
 * coalition asked for once.
 */
export async function attributeCoalitions(n: number, utility: Utility, options: CoalitionOptions): Promise<CoalitionAttribution> {
  checkCoalitionOptions(options, n);
  const game = new CoalitionGame(n, utility);
  const samples = options.samples ?? DEFAULT_SAMPLES;
  const seed = options.seed ?? 0;
  const random = new SeededRandom(seed);
  switch (options.method) {
    case "leave-one-out":
      return leaveOneOut(game);
    case "shapley":
      return exactShapley(game);
    case "kernel-shap":
      return { ...(await kernelShap(game, samples, random)), seed };
    case "tmc-shapley":
      return { ...(await tmcShapley(game, samples, random, options.truncation ?? DEFAULT_TRUNCATION)), seed };
    case "beta-shapley":
      return { ...(await betaShapley(game, samples, random, options.betaAlpha ?? DEFAULT_BETA.alpha, options.betaBeta ?? DEFAULT_BETA.beta)), seed };
    case "contextcite":
      return { ...(await contextCite(game, samples, random, options.lassoRatio ?? DEFAULT_LASSO_RATIO)), seed };
  }
}
