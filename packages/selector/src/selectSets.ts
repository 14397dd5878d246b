// Steps 6-7 of the pipeline on the occluded answers: α per metric, the elbow selection with its reasons,
// and the gap fill of the kept sets. One function behind the embedded pipeline and `attr-rag selector`.
import { status } from "@grpc/grpc-js";
import { AttributionMethod, type AttributionTable, type SelectionRequest, type SelectionResult } from "@attr-rag/contracts";
import { attributionScores, selectChunkSets, type AttributionMetric } from "@attr-rag/core";
import { ServiceError } from "@attr-rag/index";
import { answerEmbeddings } from "./answerEmbeddings.js";
import { fillKeptGaps } from "./gapFill.js";
import { metricFromProto, metricToProto } from "./protoNames.js";
import type { SelectorDeps } from "./selectorBackend.js";
import { settingsFromProto } from "./selectionSettings.js";
import { selectionToProto } from "./selectionToProto.js";

const invalid = (message: string) => new ServiceError(status.INVALID_ARGUMENT, message);

export async function selectSets(request: SelectionRequest, deps: SelectorDeps, signal: AbortSignal): Promise<SelectionResult> {
  const settings = settingsFromProto(request.params);
  if (typeof settings === "string") throw invalid(`selection request: ${settings}`);
  const sets = request.sets;
  if (sets.length === 0) throw invalid("selection request: sets is empty");
  const setIds = sets.map((s) => s.setId);
  const { metrics } = settings;

  const t0 = performance.now();
  let embedder = "";
  let alphas: Readonly<Record<string, readonly number[]>>;
  if (request.attribution !== undefined && request.attribution.rows.length > 0) {
    alphas = alphasOf(request.attribution, metrics, setIds);
  } else {
    if (request.answers.length !== sets.length) throw invalid(`selection request: ${request.answers.length} answers for ${sets.length} sets`);
    const occluded = [...request.answers].sort((a, b) => a.setIndex - b.setIndex).map((a) => a.text);
    const embed = async (texts: readonly string[], s: AbortSignal) => {
      const response = await deps.embedTexts({ texts: [...texts] }, s);
      embedder = response.embedder;
      return response.embeddings.map((e) => Float32Array.from(e.values));
    };
    const embeddings = metrics.includes("cosine") ? await answerEmbeddings(embed, request.fullAnswer, occluded, signal) : undefined;
    alphas = attributionScores({ full: request.fullAnswer, occluded, metrics, ...(embeddings ? { embeddings } : {}) }).alphas;
  }
  const attributionMs = performance.now() - t0;

  const t1 = performance.now();
  const warnings: string[] = [];
  const minVotes = Math.min(settings.minVotes, metrics.length);
  if (minVotes < settings.minVotes) warnings.push(`min_votes ${settings.minVotes} is more than the ${metrics.length} metrics; used ${minVotes}`);
  const selected = selectChunkSets(
    { sets: sets.map((s) => ({ id: s.setId, tokens: s.tokenCount ?? 0 })), metrics, alphas },
    {
      tau: settings.tau,
      minVotes,
      epsilon: settings.epsilon,
      ...(settings.maxSets !== undefined ? { maxSets: settings.maxSets } : {}),
      ...(settings.tokenBudget !== undefined ? { tokenBudget: settings.tokenBudget } : {}),
    },
  );
  const selection = selectionToProto(selected, setIds, alphas, settings, minVotes < settings.minVotes);
  if (selected.contextIgnored) warnings.push("every α was below ε: the answer did not depend on the context; kept the top re-ranked set");
  const selectionMs = performance.now() - t1;

  const t2 = performance.now();
  const kept = [...selected.kept].sort((a, b) => a - b).map((i) => sets[i]!);
  const filled = await fillKeptGaps(kept, settings.maxGap, (r, s) => deps.getChunks(r, s), signal);
  warnings.push(...filled.warnings);
  const gapFillMs = performance.now() - t2;

  const attribution: AttributionTable = {
    method: AttributionMethod.ATTRIBUTION_METHOD_OCCLUSION,
    metrics: metrics.map(metricToProto),
    rows: setIds.map((setId, j) => ({ setIndex: j, setId, scores: metrics.map((m) => ({ metric: metricToProto(m), alpha: alphas[m]![j]! })) })),
    evaluations: request.attribution?.evaluations ?? sets.length,
  };
  return { requestId: request.requestId, attribution, selection, gapFill: filled.gapFill, embedder, attributionMs, selectionMs, gapFillMs, warnings };
}

/** α given by the caller (a coalition method): one row per set, in set order, with every requested metric. */
function alphasOf(table: AttributionTable, metrics: readonly AttributionMetric[], setIds: readonly string[]): Record<string, number[]> {
  if (table.rows.length !== setIds.length) throw invalid(`selection request: the attribution table has ${table.rows.length} rows for ${setIds.length} sets`);
  const alphas: Record<string, number[]> = Object.fromEntries(metrics.map((m) => [m, [] as number[]]));
  table.rows.forEach((row, j) => {
    for (const m of metrics) {
      const score = row.scores.find((s) => metricFromProto(s.metric) === m);
      if (score === undefined) throw invalid(`selection request: attribution row ${j} has no ${m} score`);
      alphas[m]!.push(score.alpha);
    }
  });
  return alphas;
}
