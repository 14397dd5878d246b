// Rank agreement between two score vectors (RQ1: a method against exact Shapley; ContextCite's LDS).

/** 1-based ranks, ties given their average rank (as scipy.stats.rankdata). */
export function averageRanks(x: readonly number[]): number[] {
  const order = x.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]);
  const ranks = new Array<number>(x.length);
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && order[j + 1]![0] === order[i]![0]) j++;
    for (let k = i; k <= j; k++) ranks[order[k]![1]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return ranks;
}

function pearson(a: readonly number[], b: readonly number[]): number {
  const n = a.length;
  const ma = a.reduce((s, v) => s + v, 0) / n;
  const mb = b.reduce((s, v) => s + v, 0) / n;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    sab += (a[i]! - ma) * (b[i]! - mb);
    saa += (a[i]! - ma) ** 2;
    sbb += (b[i]! - mb) ** 2;
  }
  return saa === 0 || sbb === 0 ? Number.NaN : sab / Math.sqrt(saa * sbb);
}

function checkPair(name: string, a: readonly number[], b: readonly number[]): void {
  if (a.length !== b.length) throw new RangeError(`${name}: ${a.length} and ${b.length} values`);
}

/** Spearman's ρ with average ranks for ties; NaN when either side is constant or has < 2 values. */
export function spearman(a: readonly number[], b: readonly number[]): number {
  checkPair("spearman", a, b);
  return a.length < 2 ? Number.NaN : pearson(averageRanks(a), averageRanks(b));
}

/** Kendall's τ-b (tie-corrected, as scipy.stats.kendalltau); NaN when either side is constant. */
export function kendallTau(a: readonly number[], b: readonly number[]): number {
  checkPair("kendallTau", a, b);
  let concordant = 0;
  let discordant = 0;
  let tiesA = 0;
  let tiesB = 0;
  for (let i = 0; i < a.length; i++) {
    for (let j = i + 1; j < a.length; j++) {
      const da = Math.sign(a[i]! - a[j]!);
      const db = Math.sign(b[i]! - b[j]!);
      if (da === 0 && db === 0) continue;
      if (da === 0) tiesA++;
      else if (db === 0) tiesB++;
      else if (da === db) concordant++;
      else discordant++;
    }
  }
  const denominator = Math.sqrt((concordant + discordant + tiesA) * (concordant + discordant + tiesB));
  return denominator === 0 ? Number.NaN : (concordant - discordant) / denominator;
}
