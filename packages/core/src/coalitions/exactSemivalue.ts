import { coalitionOfMask, popcount, type CoalitionGame } from "./coalitionGame.js";
import type { CoalitionAttribution } from "./coalitionOptions.js";
import { choose, shapleyPositionWeights } from "./semivalueWeights.js";

/**
 * φ_i = Σ_{S ⊆ N∖{i}} p(|S|+1) / C(n−1, |S|) · (v(S ∪ {i}) − v(S)) over all 2^n coalitions, scored in one
 * batch. With p = 1/n this is the Shapley value: the only attribution with efficiency, symmetry, dummy and
 * linearity. Exponential: the gateway allows it up to 12 sets (4,096 coalitions).
 */
export async function exactSemivalue(game: CoalitionGame, positionWeights: readonly number[]): Promise<{ scores: number[]; vFull: number; vEmpty: number; vWithout: number[] }> {
  const n = game.n;
  if (n > 20) throw new RangeError(`exact semivalues enumerate 2^n coalitions; n = ${n} is too many`);
  if (positionWeights.length !== n) throw new RangeError(`${positionWeights.length} position weights for ${n} players`);
  const size = 1 << n;
  const masks = Array.from({ length: size }, (_, m) => m);
  const v = await game.values(masks.map((m) => coalitionOfMask(m, n)));
  const perSubset = Array.from({ length: n }, (_, s) => positionWeights[s]! / choose(n - 1, s));
  const scores = new Array<number>(n).fill(0);
  for (let m = 0; m < size; m++) {
    const s = popcount(m);
    for (let i = 0; i < n; i++) {
      if (m & (1 << i)) continue;
      scores[i]! += perSubset[s]! * (v[m | (1 << i)]! - v[m]!);
    }
  }
  const full = size - 1;
  return { scores, vFull: v[full]!, vEmpty: v[0]!, vWithout: Array.from({ length: n }, (_, i) => v[full & ~(1 << i)]!) };
}

export async function exactShapley(game: CoalitionGame): Promise<CoalitionAttribution> {
  const r = await exactSemivalue(game, shapleyPositionWeights(game.n));
  return { method: "shapley", ...r, utilityCalls: game.utilityCalls };
}
