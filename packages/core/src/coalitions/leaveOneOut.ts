import type { CoalitionGame } from "./coalitionGame.js";
import type { CoalitionAttribution } from "./coalitionOptions.js";

/** φ_j = v(N) − v(N \ {j}): n + 1 coalitions, one batch. Blind to redundancy (two sets saying the same get ~0). */
export async function leaveOneOut(game: CoalitionGame): Promise<CoalitionAttribution> {
  const all = game.all;
  const without = all.map((j) => all.filter((i) => i !== j));
  const [vFull, ...vWithout] = await game.values([all, ...without]);
  return { method: "leave-one-out", scores: vWithout.map((v) => vFull! - v), utilityCalls: game.utilityCalls, vFull: vFull!, vWithout };
}
