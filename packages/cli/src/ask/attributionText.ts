// The α table as a person reads it (ask and attribute print the same): one row per set, one column per
// metric, then the selection's decision and its reason.
import {
  AttributionMethod,
  attributionMethodToJSON,
  attributionMetricToJSON,
  selectionDecisionToJSON,
  type AttributionTable,
  type SelectionExplanation,
} from "@attr-rag/contracts";

// The core's metric names (rougeL, not ROUGE_L), as everywhere else the CLI prints them.
const METRIC_NAMES: Record<string, string> = { COSINE: "cosine", JACCARD: "jaccard", ROUGE1: "rouge1", ROUGE2: "rouge2", ROUGE_L: "rougeL", ROUGE_LSUM: "rougeLsum", LOG_LIKELIHOOD: "loglik" };
const metricName = (m: number) => {
  const key = attributionMetricToJSON(m).replace("ATTRIBUTION_METRIC_", "");
  return METRIC_NAMES[key] ?? key.toLowerCase();
};

/** What the α column means for the table's method. */
function alphaMeaning(method: AttributionMethod): string {
  switch (method) {
    case AttributionMethod.ATTRIBUTION_METHOD_UNSPECIFIED:
    case AttributionMethod.ATTRIBUTION_METHOD_OCCLUSION:
      return "α = 1 − similarity of A_full and the answer without the set";
    default:
      return `α = the set's ${attributionMethodToJSON(method).replace(/^ATTRIBUTION_METHOD_/, "").toLowerCase().replace(/_/g, " ")} value of v(C) = log P(A_full | question, C), in nats`;
  }
}

export function attributionText(attribution: AttributionTable, selection: SelectionExplanation): string {
  const metrics = attribution.metrics.map(metricName);
  const idWidth = Math.max(8, ...attribution.rows.map((r) => r.setId.length));
  const lines = [`Attribution (${alphaMeaning(attribution.method)}):`, `  ${"set".padEnd(idWidth)} ${metrics.map((m) => m.slice(0, 9).padStart(9)).join(" ")}  decision`];
  for (const row of attribution.rows) {
    const decision = selection.sets.find((s) => s.setId === row.setId);
    const kept = decision !== undefined && selectionDecisionToJSON(decision.decision) === "SELECTION_DECISION_KEPT";
    const cell = (s: { alpha: number; stdError?: number }) => (s.alpha.toFixed(3) + (s.stdError !== undefined ? `±${s.stdError.toFixed(2)}` : "")).padStart(9);
    lines.push(`  ${row.setId.padEnd(idWidth)} ${row.scores.map(cell).join(" ")}  ${kept ? "KEPT" : "    "} ${decision?.reasonText ?? ""}`);
  }
  return `${lines.join("\n")}\n`;
}
