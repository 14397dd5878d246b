/**
 * L1-regularised least squares with an unpenalised intercept, by cyclic coordinate descent:
 * minimise (1 / 2m) ‖y − w₀ − X w‖² + λ ‖w‖₁ (scikit-learn's Lasso objective). λ is given as a fraction of
 * λ_max = max_j |x̃_jᵀ ỹ| / m, the smallest λ that zeroes every weight, so the same ratio means the same
 * sparsity whatever the scale of y (log-likelihoods of long answers are large).
 */
export function lasso(x: readonly (readonly number[])[], y: readonly number[], lambdaRatio: number): { weights: number[]; intercept: number } {
  const m = y.length;
  const n = x[0]?.length ?? 0;
  if (m === 0) throw new RangeError("lasso needs at least one sample");
  const meanX = Array.from({ length: n }, (_, j) => x.reduce((s, row) => s + row[j]!, 0) / m);
  const meanY = y.reduce((s, v) => s + v, 0) / m;
  const xc = x.map((row) => row.map((v, j) => v - meanX[j]!));
  const yc = y.map((v) => v - meanY);
  const norms = Array.from({ length: n }, (_, j) => xc.reduce((s, row) => s + row[j]! ** 2, 0) / m);
  const lambdaMax = Math.max(0, ...Array.from({ length: n }, (_, j) => Math.abs(xc.reduce((s, row, k) => s + row[j]! * yc[k]!, 0)) / m));
  const lambda = lambdaRatio * lambdaMax;
  const w = new Array<number>(n).fill(0);
  const residual = [...yc];
  for (let sweep = 0; sweep < 10_000; sweep++) {
    let change = 0;
    for (let j = 0; j < n; j++) {
      if (norms[j] === 0) continue;
      let rho = 0;
      for (let k = 0; k < m; k++) rho += xc[k]![j]! * (residual[k]! + xc[k]![j]! * w[j]!);
      rho /= m;
      const next = Math.sign(rho) * Math.max(0, Math.abs(rho) - lambda) / norms[j]!;
      const d = next - w[j]!;
      if (d !== 0) {
        for (let k = 0; k < m; k++) residual[k]! -= xc[k]![j]! * d;
        w[j] = next;
        change = Math.max(change, Math.abs(d));
      }
    }
    if (change <= 1e-12 * Math.max(1, lambdaMax)) break;
  }
  return { weights: w, intercept: meanY - w.reduce((s, wj, j) => s + wj * meanX[j]!, 0) };
}
