// What eval occlusion keeps of one Ask: the sets, α per metric, the kept sets, and the occlusion stage's work.
import { attributionMetricToJSON, type AskEvent } from "@attr-rag/contracts";

export interface OcclusionOutcome {
  readonly setIds: string[];
  /** α per metric name (proto JSON name, e.g. ATTRIBUTION_METRIC_ROUGE1) per set, sets in re-rank order. */
  readonly alphas: Record<string, number[]>;
  readonly kept: number[];
  /** Tokens the engine evaluated for A_full and the occluded answers. */
  readonly tokensEvaluated: number;
  /** Engine time of the occlusion stage (ms). */
  readonly occlusionMs: number;
  /** Sets the screen strategy screened out (not regenerated); 0 for the other strategies. */
  readonly screened: number;
}

export function occlusionOutcome(events: readonly AskEvent[]): OcclusionOutcome {
  let setIds: string[] | undefined;
  const alphas: Record<string, number[]> = {};
  let selected: string[] | undefined;
  let tokensEvaluated: number | undefined;
  let occlusionMs = 0;
  let screened = 0;
  for (const e of events) {
    const stage = e.stage;
    if (stage?.$case === "occlusionProgress") {
      screened = Math.max(screened, stage.value.finished.filter((f) => f.screened).length);
    } else if (stage?.$case === "attribution") {
      const rows = [...stage.value.rows].sort((a, b) => a.setIndex - b.setIndex);
      setIds = rows.map((r) => r.setId);
      for (const [j, row] of rows.entries()) {
        for (const s of row.scores) (alphas[attributionMetricToJSON(s.metric)] ??= [])[j] = s.alpha;
      }
    } else if (stage?.$case === "selection") {
      selected = [...stage.value.selectedSetIds];
    } else if (stage?.$case === "done") {
      tokensEvaluated = stage.value.occlusionCounters?.tokensEvaluated;
      occlusionMs = stage.value.occlusionCounters?.elapsedMs ?? stage.value.timings?.occlusionMs ?? 0;
    }
  }
  if (setIds === undefined) throw new Error("the Ask produced no attribution (too few context sets?)");
  if (selected === undefined) throw new Error("the Ask produced no selection");
  if (tokensEvaluated === undefined) throw new Error("the Ask's done event has no occlusion counters");
  const ids = setIds;
  return { setIds: ids, alphas, kept: selected.map((id) => ids.indexOf(id)).filter((i) => i >= 0), tokensEvaluated, occlusionMs, screened };
}
