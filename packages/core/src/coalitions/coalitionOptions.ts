// Names, defaults and limits of the coalition attribution methods. The limits exist because every sampled
// coalition is a forward pass: a typo'd budget must be refused, not run for hours.

export const COALITION_METHODS = ["leave-one-out", "shapley", "kernel-shap", "tmc-shapley", "beta-shapley", "contextcite"] as const;
export type CoalitionMethod = (typeof COALITION_METHODS)[number];

export function isCoalitionMethod(name: string): name is CoalitionMethod {
  return (COALITION_METHODS as readonly string[]).includes(name);
}

/** Methods that draw coalitions or permutations (and so take samples and a seed). */
export const SAMPLING_METHODS: readonly CoalitionMethod[] = ["kernel-shap", "tmc-shapley", "beta-shapley", "contextcite"];

export const DEFAULT_SAMPLES = 64;
/** Exact Shapley scores all 2^n coalitions: 4,096 at n = 12. */
export const MAX_EXACT_SETS = 12;
/** Coalitions (Kernel SHAP, ContextCite) or permutations (TMC, Beta). */
export const MAX_SAMPLES = 65_536;
export const DEFAULT_BETA = { alpha: 16, beta: 1 } as const;
/** TMC stops a permutation once v(prefix) is this close to v(N), relative to |v(N) - v(∅)|. */
export const DEFAULT_TRUNCATION = 0.01;
/** ContextCite's L1 strength as a fraction of the smallest λ that zeroes every weight. */
export const DEFAULT_LASSO_RATIO = 0.01;

export interface CoalitionOptions {
  readonly method: CoalitionMethod;
  /** Sample budget of the sampling methods; default 64. */
  readonly samples?: number;
  /** Seed of the sampling methods; default 0. */
  readonly seed?: number;
  /** Beta-Shapley's Beta(α, β) cardinality weights; default Beta(16, 1). */
  readonly betaAlpha?: number;
  readonly betaBeta?: number;
  /** TMC's truncation tolerance; default 0.01 (0 = plain permutation sampling). */
  readonly truncation?: number;
  /** ContextCite's λ as a fraction of λ_max; default 0.01. */
  readonly lassoRatio?: number;
}

/** Refuses options a method cannot run with, naming the limit (the gateway answers INVALID_ARGUMENT). */
export function checkCoalitionOptions(o: CoalitionOptions, nSets: number): void {
  if (!isCoalitionMethod(o.method)) throw new RangeError(`unknown attribution method "${o.method}"; use one of occlusion, ${COALITION_METHODS.join(", ")}`);
  if (!Number.isInteger(nSets) || nSets < 1) throw new RangeError(`attribution needs at least one chunk set, got ${nSets}`);
  if (o.method === "shapley" && nSets > MAX_EXACT_SETS) {
    throw new RangeError(`exact Shapley scores all 2^n coalitions and allows at most ${MAX_EXACT_SETS} chunk sets, got ${nSets}; use kernel-shap, or fewer sets (k)`);
  }
  if (o.samples !== undefined && (!Number.isInteger(o.samples) || o.samples < 1 || o.samples > MAX_SAMPLES)) {
    throw new RangeError(`samples must be an integer in [1, ${MAX_SAMPLES}], got ${o.samples}`);
  }
  if (o.seed !== undefined && (!Number.isInteger(o.seed) || o.seed < 0 || o.seed > 0xffffffff)) {
    throw new RangeError(`seed must be an integer in [0, 4294967295], got ${o.seed}`);
  }
  for (const [name, v] of [["beta alpha", o.betaAlpha], ["beta beta", o.betaBeta]] as const) {
    if (v !== undefined && !(Number.isFinite(v) && v > 0 && v <= 1e6)) throw new RangeError(`the Beta-Shapley ${name} must be a number in (0, 1e6], got ${v}`);
  }
  if (o.truncation !== undefined && !(o.truncation >= 0 && o.truncation < 1)) throw new RangeError(`the TMC truncation tolerance must be in [0, 1), got ${o.truncation}`);
  if (o.lassoRatio !== undefined && !(o.lassoRatio > 0 && o.lassoRatio < 1)) throw new RangeError(`the ContextCite lasso ratio must be in (0, 1), got ${o.lassoRatio}`);
}

export interface CoalitionAttribution {
  readonly method: CoalitionMethod;
  /** One score per set, in set order: its value under the method (higher = more influential). */
  readonly scores: readonly number[];
  /** Standard errors of the sampling estimates, where the method has them. */
  readonly stdErrors?: readonly number[];
  /** Distinct coalitions evaluated. */
  readonly utilityCalls: number;
  /** v(N), v(∅) and v(N \ {j}) where the method evaluated them. */
  readonly vFull?: number;
  readonly vEmpty?: number;
  readonly vWithout?: readonly number[];
  /** ContextCite: Spearman correlation of the surrogate's predictions with v on held-out ablations. */
  readonly lds?: number;
  /** The samples and seed a sampling method ran with. */
  readonly samples?: number;
  readonly seed?: number;
}
