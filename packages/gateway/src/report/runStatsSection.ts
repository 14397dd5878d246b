import type { EngineCounters, StageTimings } from "@attr-rag/contracts";
import { escapeHtml } from "./escapeHtml.js";
import { formatCount, formatMs } from "./formatNumber.js";
import { notAvailable, section, table } from "./html.js";
import type { ReportData } from "./reportData.js";

const STAGES: readonly (readonly [keyof StageTimings, string])[] = [
  ["retrieveMs", "retrieve"],
  ["alignMs", "align"],
  ["rerankMs", "re-rank"],
  ["initialAnswerMs", "initial answer"],
  ["occlusionMs", "occlusion"],
  ["attributionMs", "attribution"],
  ["selectionMs", "selection"],
  ["gapFillMs", "gap fill"],
  ["finalAnswerMs", "final answer"],
  ["totalMs", "total"],
];

const COUNTERS: readonly (readonly [keyof EngineCounters, string])[] = [
  ["tokensEvaluated", "tokens evaluated"],
  ["tokensReused", "tokens reused (shared prefix)"],
  ["decodeSteps", "decode steps"],
  ["promptTokens", "prompt tokens"],
  ["draftTokensProposed", "draft tokens proposed"],
  ["draftTokensAccepted", "draft tokens accepted"],
  ["sequences", "sequences"],
  ["nearTies", "near ties"],
];

function timingsTable(t: StageTimings | undefined): string {
  if (!t) return notAvailable("stage timings");
  // An unset stage did not run (proto contract), which is different from a stage that took 0 ms.
  const rows = STAGES.map(([key, label]) => ({
    className: key === "totalMs" ? "total" : undefined,
    cellsHtml: [escapeHtml(label), t[key] === undefined ? `<span class="muted">did not run</span>` : formatMs(t[key])],
  }));
  return table(["stage", "wall clock"], rows, "numeric");
}

function countersTable(whole: EngineCounters | undefined, occlusion: EngineCounters | undefined): string {
  if (!whole && !occlusion) return notAvailable("engine counters");
  const rows = COUNTERS.map(([key, label]) => ({
    cellsHtml: [escapeHtml(label), formatCount(whole?.[key]), formatCount(occlusion?.[key])],
  }));
  rows.push({ cellsHtml: ["engine time", formatMs(whole?.elapsedMs), formatMs(occlusion?.elapsedMs)] });
  return table(["counter", "whole request", "occlusion stage"], rows, "numeric");
}

export function renderRunStatsSection(data: ReportData): string {
  const d = data.done;
  if (!d) return section("stats", "Timings and counters", notAvailable("timings and counters (no done event)"));
  return section(
    "stats",
    "Timings and counters",
    ["<h3>Stages</h3>", timingsTable(d.timings), "<h3>Engine</h3>", countersTable(d.counters, d.occlusionCounters)].join("\n"),
  );
}
