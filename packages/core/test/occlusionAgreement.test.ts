import { describe, expect, it } from "vitest";
import { occlusionAgreement } from "../src/evaluation/occlusionAgreement.js";

describe("occlusion agreement", () => {
  it("occlusionAgreement - α rank correlation is Spearman's ρ of mean α (scipy.stats.spearmanr values), null when undefined", () => {
    // spearmanr([1,2,3,4,5],[5,6,7,8,7]) = 0.8207826816681233 (scipy 1.x)
    const a = occlusionAgreement({ alphas: { bleu: [1, 2, 3, 4, 5] }, kept: [4] }, { alphas: { bleu: [5, 6, 7, 8, 7] }, kept: [3] });
    expect(a.spearman).toBeCloseTo(0.8207826816681233, 12);
    const constant = occlusionAgreement({ alphas: { bleu: [1, 2] }, kept: [] }, { alphas: { bleu: [3, 3] }, kept: [] });
    expect(constant.spearman).toBeNull();
    expect(occlusionAgreement({ alphas: { bleu: [1] }, kept: [0] }, { alphas: { bleu: [1] }, kept: [0] }).spearman).toBeNull();
  });

  it("occlusionAgreement - identical runs agree fully; a changed selection and changed α are measured", () => {
    const exact = { alphas: { bleu: [0.9, 0.1, 0.4], rouge1: [0.8, 0.2, 0.3] }, kept: [0, 2] };
    const same = occlusionAgreement(exact, exact);
    expect(same).toEqual({ selectionIdentical: true, keptJaccard: 1, spearman: 1, meanAbsDeltaAlpha: { bleu: 0, rouge1: 0 } });
    const other = occlusionAgreement(exact, { alphas: { bleu: [0.1, 0.9, 0.4], rouge1: [0.2, 0.8, 0.3], cosine: [1, 1, 1] }, kept: [1, 2] });
    expect(other.selectionIdentical).toBe(false);
    expect(other.keptJaccard).toBeCloseTo(1 / 3, 12);
    expect(other.spearman).toBeCloseTo(-1, 12); // mean α ranks [3,1,2] against [1,3,2]
    // Only metrics both runs scored are compared.
    expect(Object.keys(other.meanAbsDeltaAlpha)).toEqual(["bleu", "rouge1"]);
    expect(other.meanAbsDeltaAlpha.bleu).toBeCloseTo(1.6 / 3, 12);
    expect(occlusionAgreement({ alphas: { bleu: [] }, kept: [] }, { alphas: { bleu: [] }, kept: [] }).keptJaccard).toBe(1);
    expect(() => occlusionAgreement(exact, { alphas: { cosine: [1, 1, 1] }, kept: [] })).toThrow(/share no metric/);
    expect(() => occlusionAgreement(exact, { alphas: { bleu: [1] }, kept: [] })).toThrow(/expected 3/);
  });
});
