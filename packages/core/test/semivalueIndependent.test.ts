// Exact Shapley and Beta(α, β)-Shapley checked against computations that share no code with them: Shapley as
// the mean marginal contribution over every permutation (its definition), and Beta-Shapley's weights from
// factorials (integer α, β: B(a, b) = (a−1)!(b−1)!/(a+b−1)!), not from the log-Gamma the implementation uses.
import { describe, expect, it } from "vitest";
import { attributeCoalitions, betaPositionWeights, CoalitionGame, exactSemivalue, SeededRandom, type Coalition } from "../src/index.js";

type Game = (c: Coalition) => number;

/** A game with linear terms, pairwise interactions and a three-way term (not additive: weights matter). */
function game(n: number, seed: number): Game {
  const r = new SeededRandom(seed);
  const a = Array.from({ length: n }, () => r.next() * 4 - 1);
  const pairs = Array.from({ length: n }, () => [r.below(n), r.below(n), r.next() * 6 - 3] as const).filter(([i, j]) => i !== j);
  return (c) => {
    const s = new Set(c);
    let x = c.length === 0 ? 0 : -2;
    for (const i of c) x += a[i]!;
    for (const [i, j, w] of pairs) if (s.has(i) && s.has(j)) x += w;
    if (s.has(0) && s.has(1) && s.has(2)) x -= 3;
    return x;
  };
}

function permutations(n: number): number[][] {
  if (n === 0) return [[]];
  return permutations(n - 1).flatMap((p) => Array.from({ length: n }, (_, k) => [...p.slice(0, k), n - 1, ...p.slice(k)]));
}

/** Shapley by definition: each player's marginal contribution, averaged over all n! orders of arrival. */
function shapleyByPermutations(n: number, v: Game): number[] {
  const phi = new Array<number>(n).fill(0);
  const orders = permutations(n);
  for (const order of orders) {
    const before: number[] = [];
    for (const i of order) {
      const without = v([...before].sort((a, b) => a - b));
      before.push(i);
      phi[i]! += v([...before].sort((a, b) => a - b)) - without;
    }
  }
  return phi.map((x) => x / orders.length);
}

const factorial = (k: number): number => (k <= 1 ? 1 : k * factorial(k - 1));
const binomial = (n: number, k: number) => factorial(n) / (factorial(k) * factorial(n - k));
const betaFunction = (a: number, b: number) => (factorial(a - 1) * factorial(b - 1)) / factorial(a + b - 1);

/** p(j) = C(n−1, j−1) B(j+β−1, n−j+α) / B(α, β) for integer α, β ≥ 1, by factorials. */
function betaWeightsByFactorials(n: number, alpha: number, beta: number): number[] {
  return Array.from({ length: n }, (_, k) => binomial(n - 1, k) * (betaFunction(k + beta, n - k - 1 + alpha) / betaFunction(alpha, beta)));
}

/** A semivalue by direct enumeration: Σ over S ∌ i of p(|S|+1)/C(n−1, |S|) · (v(S ∪ i) − v(S)). */
function semivalueBySubsets(n: number, v: Game, p: readonly number[]): number[] {
  const phi = new Array<number>(n).fill(0);
  for (let mask = 0; mask < 1 << n; mask++) {
    const s = Array.from({ length: n }, (_, k) => k).filter((k) => mask & (1 << k));
    for (let i = 0; i < n; i++) {
      if (mask & (1 << i)) continue;
      const withI = [...s, i].sort((a, b) => a - b);
      phi[i]! += (p[s.length]! / binomial(n - 1, s.length)) * (v(withI) - v(s));
    }
  }
  return phi;
}

const maxAbsDiff = (a: readonly number[], b: readonly number[]) => Math.max(...a.map((x, i) => Math.abs(x - b[i]!)));

describe("semivalues against independent computations", () => {
  it("semivalues - exact Shapley equals the mean marginal contribution over all n! permutations (1e-9)", async () => {
    for (const [n, seed] of [[3, 1], [5, 2], [7, 3]] as const) {
      const v = game(n, seed);
      const { scores } = await attributeCoalitions(n, async (cs) => cs.map(v), { method: "shapley" });
      expect(maxAbsDiff(scores, shapleyByPermutations(n, v)), `n = ${n}`).toBeLessThan(1e-9);
    }
  });

  it("semivalues - Beta(α, β) weights for α ≠ β equal the factorial formula (1e-12) and sum to 1", () => {
    for (const n of [1, 2, 5, 9]) {
      for (const [alpha, beta] of [[16, 1], [4, 2], [2, 5], [1, 3], [3, 3]] as const) {
        const ours = betaPositionWeights(n, alpha, beta);
        const reference = betaWeightsByFactorials(n, alpha, beta);
        expect(maxAbsDiff(ours, reference), `n ${n}, α ${alpha}, β ${beta}`).toBeLessThan(1e-12);
        expect(Math.abs(reference.reduce((s, x) => s + x, 0) - 1)).toBeLessThan(1e-12);
      }
    }
    // α > β favours small coalitions, α < β large ones: the weights are not Shapley's flat 1/n.
    const small = betaWeightsByFactorials(6, 4, 2);
    const large = betaWeightsByFactorials(6, 2, 4);
    expect(small[0]!).toBeGreaterThan(small[5]!);
    expect(large[5]!).toBeGreaterThan(large[0]!);
  });

  it("semivalues - exact Beta(α, β)-Shapley with α ≠ β equals direct subset enumeration with the factorial weights (1e-9)", async () => {
    for (const [alpha, beta] of [[16, 1], [4, 2], [2, 5]] as const) {
      const n = 6;
      const v = game(n, 11 + alpha);
      const { scores } = await exactSemivalue(new CoalitionGame(n, async (cs) => cs.map(v)), betaPositionWeights(n, alpha, beta));
      expect(maxAbsDiff(scores, semivalueBySubsets(n, v, betaWeightsByFactorials(n, alpha, beta))), `α ${alpha}, β ${beta}`).toBeLessThan(1e-9);
    }
  });
});
