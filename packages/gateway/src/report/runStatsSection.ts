import { EngineStrategy, isApproximateProto, type EngineCounters, type StageTimings } from "@attr-rag/contracts";
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
  ["tokensReused", "tokens reused (shared prefix or reused KV)"],
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

const STRATEGY_LABELS: Partial<Record<EngineStrategy, string>> = {
  [EngineStrategy.ENGINE_STRATEGY_NAIVE]: "naive (exact)",
  [EngineStrategy.ENGINE_STRATEGY_PREFIX_SHARED]: "prefix-shared (exact)",
  [EngineStrategy.ENGINE_STRATEGY_SPECULATIVE]: "speculative (exact)",
  [EngineStrategy.ENGINE_STRATEGY_KV_REUSE]: "kv-reuse (APPROXIMATE: reused KV after each occluded set, shifted)",
  [EngineStrategy.ENGINE_STRATEGY_KV_MASK]: "kv-mask (APPROXIMATE: reused KV after each occluded set, positions kept)",
  [EngineStrategy.ENGINE_STRATEGY_SCREEN]: "screen (APPROXIMATE: sets screened out by a teacher-forced pass were not regenerated, α = 0)",
};

/** The occlusion strategy line; approximate answers are flagged so nobody mistakes them for exact ones. */
export function strategyLabel(c: EngineCounters | undefined): string | undefined {
  if (!c || c.strategy === EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED) return undefined;
  return STRATEGY_LABELS[c.strategy] ?? `strategy ${c.strategy}`;
}

export function renderRunStatsSection(data: ReportData): string {
  const d = data.done;
  if (!d) return section("stats", "Timings and counters", notAvailable("timings and counters (no done event)"));
  const label = strategyLabel(d.occlusionCounters);
  const approximate = isApproximateProto(d.occlusionCounters?.strategy);
  const strategy = label ? `<p${approximate ? ' class="warning"' : ""}>Occlusion strategy: ${escapeHtml(label)}</p>` : "";
  return section(
    "stats",
    "Timings and counters",
    ["<h3>Stages</h3>", timingsTable(d.timings), "<h3>Engine</h3>", strategy, countersTable(d.counters, d.occlusionCounters)].join("\n"),
  );
}
