// The approximate `screen` occlusion strategy regenerates only the sets whose removal makes A_full least
// likely; the others keep A_full as their answer. Selection must say so: their α is 0 on every metric by
// construction (not measured), and a dropped one is dropped because it was screened, not for its votes.
import type { SelectionResult, SetDecision } from "./selectChunkSets.js";

export interface ScreenedSet {
  /** Index of the set in re-rank order. */
  readonly index: number;
  /** log P(A_full | all sets) − log P(A_full | without the set), nats, from the screening pass. */
  readonly drop?: number;
}

/** α with every screened set's value set to 0 in every metric (a screened set's answer is A_full). */
export function zeroScreenedAlphas(alphas: Readonly<Record<string, readonly number[]>>, screened: readonly ScreenedSet[]): Record<string, number[]> {
  const out = Object.fromEntries(Object.entries(alphas).map(([m, a]) => [m, a.slice()]));
  for (const { index } of screened) {
    for (const a of Object.values(out)) {
      if (index < 0 || index >= a.length) throw new RangeError(`markScreened: set index ${index} is outside the ${a.length} sets`);
      a[index] = 0;
    }
  }
  return out;
}

/**
 * Relabels the decisions of screened sets: a dropped one gets reason "screened" with the drop the screening
 * pass measured; a kept one (only possible through the fallback or a metric whose α are all ≤ 0) keeps its
 * reason, with the screening noted.
 */
export function markScreened(result: SelectionResult, screened: readonly ScreenedSet[]): SelectionResult {
  if (screened.length === 0) return result;
  const byIndex = new Map(screened.map((s) => [s.index, s]));
  const decisions = result.decisions.map((d): SetDecision => {
    const s = byIndex.get(d.index);
    if (!s) return d;
    const measured = s.drop !== undefined && Number.isFinite(s.drop) ? `log P(A_full) fell ${s.drop.toFixed(3)} nats without it` : "its screening drop was among the smallest";
    const note = `screened out by the approximate screen strategy (${measured}); not regenerated, α = 0 on every metric`;
    return d.kept ? { ...d, explanation: `${d.explanation}; ${note}` } : { ...d, reason: "screened", explanation: `dropped: ${note}` };
  });
  return { ...result, decisions };
}
