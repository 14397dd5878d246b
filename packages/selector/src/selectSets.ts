// Steps 6-7 of the pipeline on the occluded answers: α per metric, the elbow selection with its reasons,
// and the gap fill of the kept sets. One function behind the embedded pipeline and `attr-rag selector`.
import { status } from "@grpc/grpc-js";
import { AttributionMethod, SelectionFlag, type AttributionTable, type SelectionRequest, type SelectionResult } from "@attr-rag/contracts";
import { attributionScores, markScreened, selectChunkSets, zeroScreenedAlphas, type AttributionMetric, type ScreenedSet } from "@attr-rag/core";
import { ServiceError } from "@attr-rag/index";
import { recordSpan } from "@attr-rag/telemetry";
import { answerEmbeddings } from "./answerEmbeddings.js";
import { fillKeptGaps } from "./gapFill.js";
import { metricFromProto, metricToProto, type SelectionMetric } from "./protoNames.js";
import type { SelectorDeps } from "./selectorDeps.js";
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
  // Columns the caller computed (a coalition method's LOG_LIKELIHOOD, or leave-one-out beside occlusion)
  // are taken as given; the text metrics are computed here from the occluded answers.
  const given = request.attribution !== undefined && request.attribution.rows.length > 0 ? request.attribution : undefined;
  const fromTable = given ? alphasOf(given, setIds).alphas : {};
  const textMetrics = metrics.filter((m): m is AttributionMetric => m !== "loglik" && fromTable[m] === undefined);
  if (metrics.includes("loglik") && fromTable.loglik === undefined) {
    throw invalid("selection request: LOG_LIKELIHOOD is among the metrics but the request has no attribution table with it");
  }
  const alphas: Record<string, readonly number[]> = Object.fromEntries(metrics.filter((m) => fromTable[m] !== undefined).map((m) => [m, fromTable[m]!]));
  if (textMetrics.length > 0) {
    if (request.answers.length !== sets.length) throw invalid(`selection request: ${request.answers.length} answers for ${sets.length} sets`);
    const occluded = [...request.answers].sort((a, b) => a.setIndex - b.setIndex).map((a) => a.text);
    const embed = async (texts: readonly string[], s: AbortSignal) => {
      const response = await deps.embedTexts({ texts: [...texts] }, s);
      embedder = response.embedder;
      return response.embeddings.map((e) => Float32Array.from(e.values));
    };
    const embeddings = textMetrics.includes("cosine") ? await answerEmbeddings(embed, request.fullAnswer, occluded, signal) : undefined;
    Object.assign(alphas, attributionScores({ full: request.fullAnswer, occluded, metrics: textMetrics, ...(embeddings ? { embeddings } : {}) }).alphas);
  }
  // Sets the approximate screen strategy did not regenerate: α = 0 by construction, on every metric.
  const screened = screenedSets(request, sets.length);
  if (screened.length > 0) Object.assign(alphas, zeroScreenedAlphas(alphas, screened));
  const attributionMs = performance.now() - t0;

  const t1 = performance.now();
  const warnings: string[] = [];
  const minVotes = Math.min(settings.minVotes, metrics.length);
  if (minVotes < settings.minVotes) warnings.push(`min_votes ${settings.minVotes} is more than the ${metrics.length} metrics; used ${minVotes}`);
  const selected = markScreened(selectChunkSets(
    { sets: sets.map((s) => ({ id: s.setId, tokens: s.tokenCount ?? 0 })), metrics, alphas },
    {
      tau: settings.tau,
      minVotes,
      epsilon: settings.epsilon,
      ...(settings.maxSets !== undefined ? { maxSets: settings.maxSets } : {}),
      ...(settings.tokenBudget !== undefined ? { tokenBudget: settings.tokenBudget } : {}),
    },
  ), screened);
  const selection = selectionToProto(selected, setIds, alphas, settings, minVotes < settings.minVotes);
  if (screened.length > 0) {
    selection.flags.push(SelectionFlag.SELECTION_FLAG_SCREENED);
    selection.summary += `; ${screened.length} of ${sets.length} sets screened out by the approximate screen strategy (not regenerated, α = 0)`;
    warnings.push(`approximate: ${screened.length} of ${sets.length} sets were screened out and not regenerated; their α is 0 by construction`);
  }
  if (selected.contextIgnored) warnings.push("every α was below ε: the answer did not depend on the context; kept the top re-ranked set");
  const selectionMs = performance.now() - t1;

  const t2 = performance.now();
  const kept = [...selected.kept].sort((a, b) => a - b).map((i) => sets[i]!);
  const filled = await fillKeptGaps(kept, settings.maxGap, (r, s) => deps.getChunks(r, s), signal);
  warnings.push(...filled.warnings);
  const gapFillMs = performance.now() - t2;

  const attribution: AttributionTable = {
    method: given?.method ?? AttributionMethod.ATTRIBUTION_METHOD_OCCLUSION,
    metrics: metrics.map(metricToProto),
    rows: setIds.map((setId, j) => {
      const row = given?.rows[j];
      return {
        setIndex: j,
        setId,
        scores: metrics.map((m) => {
          const std = row?.scores.find((sc) => metricFromProto(sc.metric) === m)?.stdError;
          return { metric: metricToProto(m), alpha: alphas[m]![j]!, ...(std !== undefined ? { stdError: std } : {}) };
        }),
        ...(row?.loglikWithout !== undefined ? { loglikWithout: row.loglikWithout } : {}),
      };
    }),
    ...(given?.loglikFull !== undefined ? { loglikFull: given.loglikFull } : {}),
    ...(given?.loglikEmpty !== undefined ? { loglikEmpty: given.loglikEmpty } : {}),
    evaluations: given?.evaluations ?? sets.length,
  };
  recordSpan("stage.attribution", t0, t0 + attributionMs);
  recordSpan("stage.selection", t1, t1 + selectionMs);
  recordSpan("stage.gap_fill", t2, t2 + gapFillMs);
  return { requestId: request.requestId, attribution, selection, gapFill: filled.gapFill, embedder, attributionMs, selectionMs, gapFillMs, warnings };
}

function screenedSets(request: SelectionRequest, n: number): ScreenedSet[] {
  const screened = request.answers.filter((a) => a.screened);
  for (const a of screened) if (a.setIndex >= n) throw invalid(`selection request: screened answer for set index ${a.setIndex}, but there are ${n} sets`);
  return screened.map((a) => ({ index: a.setIndex, ...(a.screenDrop !== undefined ? { drop: a.screenDrop } : {}) }));
}

/** α given by the caller: one row per set, in set order; every column of the table. */
function alphasOf(table: AttributionTable, setIds: readonly string[]): { alphas: Partial<Record<SelectionMetric, number[]>> } {
  if (table.rows.length !== setIds.length) throw invalid(`selection request: the attribution table has ${table.rows.length} rows for ${setIds.length} sets`);
  const columns = table.metrics.map(metricFromProto);
  const alphas: Partial<Record<SelectionMetric, number[]>> = Object.fromEntries(columns.map((m) => [m, [] as number[]]));
  table.rows.forEach((row, j) => {
    if (row.setId !== setIds[j]) throw invalid(`selection request: attribution row ${j} is set "${row.setId}", not "${setIds[j]}"`);
    for (const m of columns) {
      const score = row.scores.find((s) => metricFromProto(s.metric) === m);
      if (score === undefined || !Number.isFinite(score.alpha)) throw invalid(`selection request: attribution row ${j} has no finite ${m} score`);
      alphas[m]!.push(score.alpha);
    }
  });
  return { alphas };
}
