import { coalitionOfMask, type Coalition, type CoalitionGame } from "./coalitionGame.js";
import type { CoalitionAttribution } from "./coalitionOptions.js";
import type { SeededRandom } from "./seededRandom.js";
import { choose } from "./semivalueWeights.js";
import { solveLinear } from "./solveLinear.js";

/**
 * Kernel SHAP (Lundberg & Lee, 2017): the Shapley values are the weighted least-squares fit of
 * v(S) − v(∅) ≈ Σ_{i∈S} φ_i under the Shapley kernel k(s) = (n−1) / (C(n,s) s (n−s)), subject to
 * efficiency Σ φ_i = v(N) − v(∅). With a budget of at least 2^n − 2 coalitions every proper coalition is
 * used with its kernel weight and the fit is exact; below that, coalition sizes are drawn in proportion to
 * their total kernel weight and each draw is paired with its complement (which halves the variance for
 * the same budget), all weighted 1. The budget is rounded up to an even number.
 */
export async function kernelShap(game: CoalitionGame, samples: number, random: SeededRandom): Promise<CoalitionAttribution & { samples: number }> {
  const n = game.n;
  const all = game.all;
  const [vEmpty, vFull] = await game.values([[], all]);
  const delta = vFull! - vEmpty!;
  if (n === 1) return { method: "kernel-shap", scores: [delta], utilityCalls: game.utilityCalls, vFull: vFull!, vEmpty: vEmpty!, samples: 0 };
  const proper = 2 ** n - 2;
  const rows: { coalition: Coalition; weight: number }[] = [];
  if (samples >= proper) {
    for (let mask = 1; mask < 2 ** n - 1; mask++) {
      const c = coalitionOfMask(mask, n);
      rows.push({ coalition: c, weight: (n - 1) / (choose(n, c.length) * c.length * (n - c.length)) });
    }
  } else {
    const sizeWeights = Array.from({ length: n - 1 }, (_, k) => (n - 1) / ((k + 1) * (n - k - 1)));
    for (let pair = 0; pair < Math.ceil(samples / 2); pair++) {
      const s = random.weighted(sizeWeights) + 1;
      const c = random.subset(n, s);
      const inC = new Set(c);
      rows.push({ coalition: c, weight: 1 }, { coalition: all.filter((i) => !inC.has(i)), weight: 1 });
    }
  }
  const values = await game.values(rows.map((r) => r.coalition));
  // Efficiency eliminates φ_{n−1} = Δ − Σ_{i<n−1} φ_i: an unconstrained fit in n − 1 unknowns.
  const m = n - 1;
  const a = Array.from({ length: m }, () => new Array<number>(m).fill(0));
  const b = new Array<number>(m).fill(0);
  rows.forEach((row, k) => {
    const z = new Array<number>(n).fill(0);
    for (const i of row.coalition) z[i] = 1;
    const x = z.slice(0, m).map((zi) => zi - z[m]!);
    const y = values[k]! - vEmpty! - z[m]! * delta;
    for (let i = 0; i < m; i++) {
      if (x[i] === 0) continue;
      b[i]! += row.weight * x[i]! * y;
      for (let j = 0; j < m; j++) a[i]![j]! += row.weight * x[i]! * x[j]!;
    }
  });
  let phi = solveLinear(a, b);
  if (phi === undefined) {
    // Fewer distinct coalitions than unknowns: a small ridge picks the smallest-norm fit instead of failing.
    const ridge = 1e-6 * Math.max(1e-12, a.reduce((s, row, i) => s + row[i]!, 0) / m);
    phi = solveLinear(a.map((row, i) => row.map((v, j) => v + (i === j ? ridge : 0))), b) ?? new Array<number>(m).fill(delta / n);
  }
  const scores = [...phi, delta - phi.reduce((s, v) => s + v, 0)];
  return { method: "kernel-shap", scores, utilityCalls: game.utilityCalls, vFull: vFull!, vEmpty: vEmpty!, samples: samples >= proper ? proper : rows.length };
}
