import { DEFAULT_RRF_K } from "@attr-rag/core";
import { InvalidQueryError } from "../errors.js";

/**
 * How hybrid search fuses its BM25 and dense rankings. `rrf`: weighted reciprocal rank fusion,
 * Σ w / (rrfK + rank) with BM25 weighted `bm25Weight` against dense 1. `convex`: λ·bm25' + (1 − λ)·dense'
 * over min-max normalised scores, `bm25Weight` = λ in [0, 1] (core's convexScoreFusion).
 */
export type FusionSettings =
  | { readonly method: "rrf"; readonly rrfK: number; readonly bm25Weight: number }
  | { readonly method: "convex"; readonly bm25Weight: number };

/**
 * BM25's RRF weight against dense (1) when a call asks for RRF (an explicit `rrfK`) without a weight and the
 * store records no RRF fusion. 4 was the hybrid default up to the convex fusion below.
 */
export const DEFAULT_BM25_WEIGHT = 4;

export type RrfFusion = Extract<FusionSettings, { method: "rrf" }>;

/** The hybrid default before DEFAULT_FUSION: RRF, k = 60, BM25 weight 4. */
export const LEGACY_RRF_FUSION: RrfFusion = Object.freeze({ method: "rrf", rrfK: DEFAULT_RRF_K, bm25Weight: DEFAULT_BM25_WEIGHT });

/**
 * Hybrid's fusion for a store that records none (`attr-rag eval retrieval --tune` records one). Chosen on the
 * public sets (chemlitqa-train, chemex-like-train; USE-lite) from RRF with BM25 weight 1–32 × k 10/30/60 and
 * convex λ 0–1 by 0.05, as the fusion whose doc-level nDCG@10 falls least below the better of BM25 and dense
 * on either set, with 90 candidates (what eval retrieval fetches; bench/results/retrieval-tune-*.json) and
 * also with 50 and 150. USE-lite's dense ranking is far weaker than BM25 on chemistry text and RRF, seeing
 * only ranks, let it pull BM25's best hits down (RRF k 60, weight 4: 0.113 and 0.068 below BM25); at λ 0.9
 * dense reorders near-ties and adds documents BM25 missed: nDCG@10 0.958 and 0.875 against BM25's 0.957 and
 * 0.866, R@30 1.000 and 0.950. λ 0.7–0.95 all stay within 0.01 of BM25 on both sets; lower λ helps one set
 * and costs the other. With a stronger (GGUF) embedder, tune the store instead.
 */
export const DEFAULT_FUSION: FusionSettings = Object.freeze({ method: "convex", bm25Weight: 0.9 });

/** Checks a fusion (from a caller or from a store's meta table); errors name the field and its range. */
export function validateFusion(value: unknown, what: string): FusionSettings {
  const bad = (message: string) => new InvalidQueryError(`${what}: ${message}`);
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw bad(`fusion must be an object { method: "rrf", rrfK, bm25Weight } or { method: "convex", bm25Weight }, got ${JSON.stringify(value)}`);
  }
  const f = value as Record<string, unknown>;
  const number = (field: string) => {
    const x = f[field];
    if (typeof x !== "number" || !Number.isFinite(x)) throw bad(`fusion.${field} must be a finite number, got ${JSON.stringify(x)}`);
    return x;
  };
  if (f["method"] === "rrf") {
    const rrfK = number("rrfK");
    if (rrfK < 0) throw bad(`fusion.rrfK must be ≥ 0 (60 is the usual value), got ${rrfK}`);
    const bm25Weight = number("bm25Weight");
    if (bm25Weight < 0) throw bad(`fusion.bm25Weight (RRF) must be ≥ 0 (dense has weight 1), got ${bm25Weight}`);
    return { method: "rrf", rrfK, bm25Weight };
  }
  if (f["method"] === "convex") {
    const bm25Weight = number("bm25Weight");
    if (bm25Weight < 0 || bm25Weight > 1) throw bad(`fusion.bm25Weight (convex λ) must be from 0 to 1 (1 is BM25 alone, 0 dense alone), got ${bm25Weight}`);
    return { method: "convex", bm25Weight };
  }
  throw bad(`fusion.method must be "rrf" or "convex", got ${JSON.stringify(f["method"])}`);
}

/** Short human form, for logs and reports: `RRF (k 60, BM25 weight 4)`, `convex (λ 0.8)`. */
export function describeFusion(fusion: FusionSettings): string {
  return fusion.method === "rrf" ? `RRF (k ${fusion.rrfK}, BM25 weight ${fusion.bm25Weight})` : `convex (λ ${fusion.bm25Weight})`;
}
