import type { AskEvent } from "@attr-rag/contracts";
import { el, formatSeconds } from "../dom.js";

type Stage = NonNullable<AskEvent["stage"]>;

/** The pipeline's stages in the paper's words, in the order the gateway streams them. */
export const STAGE_LABELS: Record<Stage["$case"], string> = {
  retrieved: "Retrieve",
  aligned: "Align chunk sets",
  reranked: "Re-rank",
  initialAnswerDelta: "Answer (A_full)",
  occlusionProgress: "Occlude each set",
  attribution: "Attribution (α)",
  selection: "Select sets",
  gapFill: "Fill gaps",
  finalAnswerDelta: "Final answer",
  finalAnswer: "Citations",
  done: "Done",
};

function detailOf(stage: Stage, previous: string): string {
  switch (stage.$case) {
    case "retrieved":
      return `${stage.value.chunks.length} chunks`;
    case "aligned":
      return `${stage.value.sets.length} chunk sets`;
    case "reranked":
      return `${stage.value.sets.length} sets in re-ranked order`;
    case "initialAnswerDelta":
    case "finalAnswerDelta":
      return previous + stage.value.text;
    case "occlusionProgress":
      return `${stage.value.done} / ${stage.value.total} occluded answers`;
    case "attribution":
      return `α for ${stage.value.rows.length} sets`;
    case "selection":
      return `kept ${stage.value.selectedSetIds.length} of ${stage.value.sets.length} sets`;
    case "gapFill":
      return `${stage.value.addedChunks.length} neighbouring chunks added`;
    case "finalAnswer":
      return `${stage.value.citations.length} citations`;
    case "done":
      return stage.value.warnings.length > 0 ? `warnings: ${stage.value.warnings.join("; ")}` : "";
  }
}

/**
 * The live stage list: one row per stage, added when its first event arrives (so the rows appear in the
 * order the pipeline runs), updated by later events of the same stage, each with the time since the Ask was
 * accepted.
 */
export class StageList {
  readonly element = el("ol", { class: "stages", "aria-live": "polite", "aria-label": "Pipeline stages" });
  readonly #rows = new Map<string, { row: HTMLLIElement; detail: HTMLElement; time: HTMLElement; progress?: HTMLProgressElement }>();
  #current: HTMLLIElement | undefined;

  add(event: AskEvent): void {
    const stage = event.stage;
    if (stage === undefined) return;
    let entry = this.#rows.get(stage.$case);
    if (entry === undefined) {
      const detail = el("span", { class: "text" });
      const time = el("span", { class: "time" });
      const cell = el("div", { class: "detail" }, detail);
      const row = el("li", { "data-stage": stage.$case }, el("span", { class: "name" }, STAGE_LABELS[stage.$case]), time, cell);
      entry = { row, detail, time };
      if (stage.$case === "occlusionProgress") {
        entry.progress = el("progress", { max: 1, value: 0, "aria-label": "occlusion progress" });
        cell.append(entry.progress);
      }
      this.#rows.set(stage.$case, entry);
      this.element.append(row);
    }
    if (this.#current !== entry.row) {
      this.#current?.classList.remove("running");
      this.#current = entry.row;
    }
    entry.row.classList.toggle("running", stage.$case !== "done");
    entry.time.textContent = formatSeconds(event.elapsedMs);
    entry.detail.textContent = detailOf(stage, entry.detail.textContent ?? "");
    if (entry.progress && stage.$case === "occlusionProgress") {
      entry.progress.max = Math.max(1, stage.value.total);
      entry.progress.value = stage.value.done;
    }
  }

  stop(): void {
    this.#current?.classList.remove("running");
  }
}
