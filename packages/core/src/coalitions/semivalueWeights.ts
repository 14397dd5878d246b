// Semivalues weight a player's marginal contribution v(S ∪ {i}) − v(S) by the size of S. Written as p(j),
// the probability of joining at position j = |S| + 1 (Σ_j p(j) = 1): Shapley is p(j) = 1/n, every position
// alike; Beta(α, β)-Shapley (Kwon & Zou, 2022) is p(j) = C(n−1, j−1) B(j+β−1, n−j+α) / B(α, β), which for
// α > β favours joining small coalitions and for α = β = 1 is Shapley again.

/** ln Γ(x) for x > 0 (Lanczos, g = 7, nine terms: ~15 significant digits). */
export function logGamma(x: number): number {
  if (!(x > 0)) throw new RangeError(`logGamma needs x > 0, got ${x}`);
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  const z = x - 1;
  let a = c[0]!;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  const t = z + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

export function logBeta(a: number, b: number): number {
  return logGamma(a) + logGamma(b) - logGamma(a + b);
}

export function logChoose(n: number, k: number): number {
  return logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1);
}

/** C(n, k) exactly (as a double) while it stays below 2^53. */
export function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let c = 1;
  for (let i = 1; i <= Math.min(k, n - k); i++) c = (c * (n - Math.min(k, n - k) + i)) / i;
  return Math.round(c);
}

/** p(j) for j = 1..n (index j − 1) of Shapley. */
export function shapleyPositionWeights(n: number): number[] {
  return Array.from({ length: n }, () => 1 / n);
}

/** p(j) for j = 1..n (index j − 1) of Beta(α, β)-Shapley. */
export function betaPositionWeights(n: number, alpha: number, beta: number): number[] {
  const lb = logBeta(alpha, beta);
  return Array.from({ length: n }, (_, k) => {
    const j = k + 1;
    return Math.exp(logChoose(n - 1, j - 1) + logBeta(j + beta - 1, n - j + alpha) - lb);
  });
}
