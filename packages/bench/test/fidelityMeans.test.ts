import { describe, expect, it } from "vitest";
import { forcedStepMeans } from "../src/engine/occlusionFidelity.js";

describe("occlusion fidelity means", () => {
  it("fidelity - KL and top-1 agreement are per-step means over every forced pair", () => {
    const m = forcedStepMeans([
      { steps: 3, kl: 0.3, top1Agree: 3 },
      { steps: 1, kl: 0.5, top1Agree: 0 },
    ]);
    expect(m.meanKl).toBeCloseTo(0.2, 12);
    expect(m.top1Agreement).toBe(0.75);
  });

  it("fidelity - nothing compared is reported as null, never as KL 0 and full agreement", () => {
    expect(forcedStepMeans([])).toEqual({ meanKl: null, top1Agreement: null });
    expect(forcedStepMeans([{ steps: 0, kl: 0, top1Agree: 0 }, { steps: 0, kl: 0, top1Agree: 0 }])).toEqual({ meanKl: null, top1Agreement: null });
  });
});
