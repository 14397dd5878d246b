import { describe, expect, it } from "vitest";
import { markScreened, zeroScreenedAlphas } from "../src/selection/markScreened.js";
import { selectChunkSets } from "../src/selection/selectChunkSets.js";

const METRICS = ["cosine", "rouge1", "rougeL"];
const ALPHA = [0.6, 0.05, 0.5, 0.04];

function select(alphas: Record<string, readonly number[]>) {
  return selectChunkSets({ sets: ALPHA.map((_, i) => ({ id: `S${i + 1}` })), metrics: METRICS, alphas });
}

describe("markScreened", () => {
  it("a screened set scores 0 everywhere, is dropped as screened with its drop, and the others keep their reasons", () => {
    const measured = Object.fromEntries(METRICS.map((m) => [m, ALPHA]));
    // Without screening S3 (α 0.5) is kept by every metric's elbow.
    expect(select(measured).kept).toEqual([0, 2]);
    const screened = [{ index: 2, drop: 0.0123 }, { index: 3 }];
    const zeroed = zeroScreenedAlphas(measured, screened);
    expect(zeroed.cosine).toEqual([0.6, 0.05, 0, 0]);
    expect(measured.cosine).toEqual(ALPHA); // the caller's α are untouched
    const result = markScreened(select(zeroed), screened);
    expect(result.kept).toEqual([0]);
    expect(result.decisions.map((d) => d.reason)).toEqual(["top-voted", "too-few-votes", "screened", "screened"]);
    expect(result.decisions[2]!.explanation).toContain("fell 0.012 nats");
    expect(result.decisions[3]!.explanation).toContain("among the smallest");
    expect(result.decisions[1]!.explanation).not.toContain("screened");
  });

  it("a screened set kept by the fallback keeps its reason and says it was screened", () => {
    const low = Object.fromEntries(METRICS.map((m) => [m, [0.001, 0.002, 0.003, 0.001]]));
    const result = markScreened(select(zeroScreenedAlphas(low, [{ index: 0, drop: 0.5 }])), [{ index: 0, drop: 0.5 }]);
    expect(result.contextIgnored).toBe(true);
    expect(result.decisions[0]).toMatchObject({ kept: true, reason: "fallback-top-reranked" });
    expect(result.decisions[0]!.explanation).toMatch(/top re-ranked set.*screened out.*0\.500 nats/);
  });

  it("refuses an index outside the sets", () => {
    expect(() => zeroScreenedAlphas({ cosine: [0.1, 0.2] }, [{ index: 2 }])).toThrow(/index 2 is outside the 2 sets/);
  });
});
