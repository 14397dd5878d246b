// One line of a batch's results file: what a pipeline reads back for one item (docs/batches.md).
import { status } from "@grpc/grpc-js";
import { citationKindToJSON, selectionReasonToJSON, type BatchItemResult, type SentenceAttributions } from "@attr-rag/contracts";
import { COALITION_METHODS } from "@attr-rag/core";
import { metricFromProto } from "@attr-rag/selector";
import { methodToProto } from "@attr-rag/selector";

/** The --method name of a table's method (the rows speak the command line's language). */
const METHOD_NAMES = new Map((["occlusion", ...COALITION_METHODS] as const).map((name) => [methodToProto(name) as number, name]));

export interface ResultRow {
  id: string;
  question: string;
  /** "ok", or the item's gRPC status code name ("INVALID_ARGUMENT", "CANCELLED", …). */
  status: string;
  answer: string;
  citations: { start: number; end: number; chunk_ids: string[]; kind: string; score?: number }[];
  kept_sets: { set_id: string; doc_id: string; chunk_ids: string[]; reason: string; reason_text: string }[];
  /** Sentence-level attribution of the answer against its context blocks ("[1]", "[2]", …); null when off. */
  sentences: SentenceRows | null;
  attribution: { method: string; metrics: string[]; rows: { set_id: string; alpha: Record<string, number> }[]; sentences: SentenceRows | null } | null;
  timings: Record<string, number>;
  counters: Record<string, number> | null;
  warnings: string[];
  error?: string;
}

const lower = (name: string, prefix: string) => name.replace(prefix, "").toLowerCase();
const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export interface SentenceRows {
  set_ids: string[];
  threshold: number;
  sentences: { start: number; end: number; text: string; drops: number[]; supported_by: string[]; log_prob_full: number; log_prob_no_context: number }[];
}

function sentenceRows(text: string, s: SentenceAttributions | undefined): SentenceRows | null {
  if (s === undefined) return null;
  return {
    set_ids: s.setIds,
    threshold: s.threshold,
    sentences: s.sentences.map((x) => ({
      start: x.start,
      end: x.end,
      text: text.slice(x.start, x.end),
      drops: x.drops,
      supported_by: x.topSets.map((j) => s.setIds[j]!),
      log_prob_full: x.logProbFull,
      log_prob_no_context: x.logProbNoContext,
    })),
  };
}

export function resultRow(r: BatchItemResult): ResultRow {
  const sets = new Map(r.sets.map((s) => [s.setId, s]));
  const kept = new Set(r.selection?.selectedSetIds ?? []);
  const timings = Object.fromEntries(Object.entries(r.done?.timings ?? {}).flatMap(([k, v]) => (typeof v === "number" ? [[snake(k), v]] : [])));
  const counters = r.done?.counters === undefined ? null : Object.fromEntries(Object.entries(r.done.counters).flatMap(([k, v]) => (typeof v === "number" ? [[snake(k), v]] : [])));
  const table = r.attribution;
  const metrics = table?.metrics.map((m) => metricFromProto(m)) ?? [];
  return {
    id: r.itemId,
    question: r.question,
    status: r.statusCode === status.OK ? "ok" : (status[r.statusCode] ?? String(r.statusCode)),
    answer: r.finalAnswer?.text ?? "",
    citations: (r.finalAnswer?.citations ?? []).map((c) => ({
      start: c.start,
      end: c.end,
      chunk_ids: c.chunkIds,
      kind: lower(citationKindToJSON(c.kind), "CITATION_KIND_"),
      ...(c.score !== undefined ? { score: c.score } : {}),
    })),
    sentences: sentenceRows(r.finalAnswer?.text ?? "", r.finalAnswer?.sentences),
    kept_sets: (r.selection?.sets ?? [])
      .filter((s) => kept.has(s.setId))
      .map((s) => ({
        set_id: s.setId,
        doc_id: sets.get(s.setId)?.docId ?? "",
        chunk_ids: sets.get(s.setId)?.chunks.map((c) => c.chunkId) ?? [],
        reason: lower(selectionReasonToJSON(s.reason), "SELECTION_REASON_"),
        reason_text: s.reasonText,
      })),
    attribution:
      table === undefined
        ? null
        : {
            method: METHOD_NAMES.get(table.method) ?? "occlusion",
            metrics,
            rows: table.rows.map((row) => ({ set_id: row.setId, alpha: Object.fromEntries(row.scores.map((s, k) => [metrics[k] ?? String(k), s.alpha])) })),
            // A_full's sentences; its text is the item's initial answer.
            sentences: sentenceRows(r.initialAnswer, table.sentences),
          },
    timings,
    counters,
    warnings: r.done?.warnings ?? [],
    ...(r.statusCode !== status.OK ? { error: r.statusMessage } : {}),
  };
}
