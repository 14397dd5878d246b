import type {
  AskEvent,
  AttributionTable,
  Chunk,
  ChunkSetsAligned,
  Done,
  FinalAnswer,
  GapFill,
  Retrieved,
  SelectionExplanation,
  SetSelection,
  SetsReranked,
} from "@attr-rag/contracts";
import { SelectionDecision } from "@attr-rag/contracts";

/** The Ask stream folded into one record; every stage is optional because streams can be partial or baselines. */
export interface ReportData {
  readonly requestId: string | undefined;
  readonly retrieved: Retrieved | undefined;
  readonly aligned: ChunkSetsAligned | undefined;
  readonly reranked: SetsReranked | undefined;
  readonly attribution: AttributionTable | undefined;
  readonly selection: SelectionExplanation | undefined;
  readonly gapFill: GapFill | undefined;
  readonly finalAnswer: FinalAnswer | undefined;
  readonly done: Done | undefined;
  /** A_full, concatenated from its deltas ("" when none were streamed). */
  readonly initialAnswer: string;
  /** Final-answer deltas concatenated: what the caller saw when the stream stopped before final_answer. */
  readonly streamedFinalAnswer: string;
  /** Chunks with text, by id: ChunkSet members carry only ids, so texts come from retrieval and gap fill. */
  readonly chunks: ReadonlyMap<string, Chunk>;
  /** Selection entry per set id. */
  readonly setSelections: ReadonlyMap<string, SetSelection>;
}

export function collectReportData(events: readonly AskEvent[]): ReportData {
  let requestId: string | undefined;
  let retrieved: Retrieved | undefined;
  let aligned: ChunkSetsAligned | undefined;
  let reranked: SetsReranked | undefined;
  let attribution: AttributionTable | undefined;
  let selection: SelectionExplanation | undefined;
  let gapFill: GapFill | undefined;
  let finalAnswer: FinalAnswer | undefined;
  let done: Done | undefined;
  let initialAnswer = "";
  let streamedFinalAnswer = "";

  for (const event of events) {
    if (requestId === undefined && event.requestId) requestId = event.requestId;
    const stage = event.stage;
    if (stage === undefined) continue;
    // Each stage is sent once; if a stream somehow repeats one, the later event is the more complete one.
    switch (stage.$case) {
      case "retrieved":
        retrieved = stage.value;
        break;
      case "aligned":
        aligned = stage.value;
        break;
      case "reranked":
        reranked = stage.value;
        break;
      case "initialAnswerDelta":
        initialAnswer += stage.value.text;
        break;
      case "occlusionProgress":
        break;
      case "attribution":
        attribution = stage.value;
        break;
      case "selection":
        selection = stage.value;
        break;
      case "gapFill":
        gapFill = stage.value;
        break;
      case "finalAnswerDelta":
        streamedFinalAnswer += stage.value.text;
        break;
      case "finalAnswer":
        finalAnswer = stage.value;
        break;
      case "done":
        done = stage.value;
        break;
    }
  }

  const chunks = new Map<string, Chunk>();
  for (const scored of retrieved?.chunks ?? []) {
    if (scored.chunk) chunks.set(scored.chunk.id, scored.chunk);
  }
  for (const chunk of gapFill?.addedChunks ?? []) chunks.set(chunk.id, chunk);

  const setSelections = new Map<string, SetSelection>();
  for (const entry of selection?.sets ?? []) setSelections.set(entry.setId, entry);

  return {
    requestId,
    retrieved,
    aligned,
    reranked,
    attribution,
    selection,
    gapFill,
    finalAnswer,
    done,
    initialAnswer,
    streamedFinalAnswer,
    chunks,
    setSelections,
  };
}

/** True/false when selection decided the set, undefined when there was no selection (baseline or cut stream). */
export function isKept(data: ReportData, setId: string): boolean | undefined {
  const entry = data.setSelections.get(setId);
  if (entry === undefined) return data.selection ? data.selection.selectedSetIds.includes(setId) : undefined;
  return entry.decision === SelectionDecision.SELECTION_DECISION_KEPT;
}

/**
 * Baselines skip alignment, attribution and selection (pipeline.proto), so a stream that reached its answer
 * without any of them is a baseline run; a RERANK baseline is the one that still re-ranked.
 */
export function baselineKind(data: ReportData): "topk" | "rerank" | undefined {
  const reachedAnswer = data.finalAnswer !== undefined || data.done !== undefined;
  const pipelineRan = data.aligned !== undefined || data.attribution !== undefined || data.selection !== undefined;
  if (!reachedAnswer || pipelineRan) return undefined;
  return data.reranked ? "rerank" : "topk";
}
