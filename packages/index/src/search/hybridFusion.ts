import { InvalidQueryError } from "../errors.js";
import type { HybridSearchOptions } from "../types.js";
import { LEGACY_RRF_FUSION, validateFusion, type FusionSettings } from "./fusionSettings.js";

/**
 * The fusion one hybrid search uses: the call's `fusion`; else RRF when the call gives `rrfK`/`bm25Weight`
 * (the store's RRF settings, or the legacy ones, fill what it leaves out); else the store's fusion.
 */
export function hybridFusion(options: HybridSearchOptions, storeFusion: () => FusionSettings, stored: FusionSettings | undefined, what: string): FusionSettings {
  const { fusion, rrfK, bm25Weight } = options;
  if (fusion !== undefined) {
    if (rrfK !== undefined || bm25Weight !== undefined) {
      throw new InvalidQueryError(`${what}: give either fusion or the RRF options rrfK/bm25Weight, not both; fusion { method: "rrf", rrfK, bm25Weight } covers them`);
    }
    return validateFusion(fusion, what);
  }
  if (rrfK === undefined && bm25Weight === undefined) return storeFusion();
  if (rrfK !== undefined && (typeof rrfK !== "number" || !Number.isFinite(rrfK) || rrfK < 0)) {
    throw new InvalidQueryError(`${what}: rrfK must be a finite number ≥ 0, got ${String(rrfK)}`);
  }
  if (bm25Weight !== undefined && (typeof bm25Weight !== "number" || !Number.isFinite(bm25Weight) || bm25Weight < 0)) {
    throw new InvalidQueryError(`${what}: bm25Weight must be a finite number ≥ 0, got ${String(bm25Weight)}`);
  }
  // An explicit rrfK (the gRPC rrf_k) has always meant RRF; the store's RRF fusion, if any, fills the rest.
  const base = stored?.method === "rrf" ? stored : LEGACY_RRF_FUSION;
  return { method: "rrf", rrfK: rrfK ?? base.rrfK, bm25Weight: bm25Weight ?? base.bm25Weight };
}
