import { status } from "@grpc/grpc-js";
import type { AskRequest, ChunkSet as ProtoChunkSet, ChunkSetsAligned, StageTimings } from "@attr-rag/contracts";
import { alignChunkSets, chunkSetText, type ChunkSet, type RetrievedChunk } from "@attr-rag/core";
import { ServiceError } from "@attr-rag/index";
import type { PipelineRuntime } from "../runtime/pipelineRuntime.js";
import { attributeSets } from "./attributeSets.js";
import { promptSafe } from "./buildPrompt.js";
import type { AnswerBlock } from "./citations.js";
import { addCounters } from "@attr-rag/worker";
import { trace, withLogFields } from "@attr-rag/telemetry";
import { observeAskTimings } from "../metrics/askMetrics.js";
import { EventSink, timed, type AskEventListener } from "./eventSink.js";
import { finalContext } from "./finalContext.js";
import { generateAnswer } from "./generateAnswer.js";
import { rerankTexts } from "./rerank.js";
import { resolveAsk, type ResolvedAsk } from "./resolveAsk.js";
import { retrieve } from "./retrieve.js";

/**
 * One Ask, start to finish, streaming an event per stage to `listener`: the Attr-RAG pipeline (SPEC
 * section 1) or a Table I baseline. The one code path behind the gRPC service and `attr-rag ask`.
 * Rejects with a ServiceError (precise gRPC code) on bad input; `signal` stops the engine work at once.
 */
export async function runAsk(
  runtime: PipelineRuntime,
  request: AskRequest,
  listener: AskEventListener,
  signal: AbortSignal,
  /** When the request was accepted (performance.now()), so queue time counts in elapsed_ms. */
  acceptedAt: number = performance.now(),
): Promise<void> {
  const ask = resolveAsk(request, runtime.config);
  // The stage histograms are fed from the `done` event: the timings the client sees are the ones exported.
  const observed: AskEventListener = (event) => {
    if (event.stage?.$case === "done") observeAskTimings("Ask", ask.baseline, event.stage.value.timings);
    listener(event);
  };
  const sink = new EventSink(observed, ask.requestId, acceptedAt);
  trace.getActiveSpan()?.setAttribute("attr_rag.request.id", sink.requestId);
  await withLogFields({ request_id: sink.requestId }, () => (ask.baseline === "none" ? runAttrRag(runtime, ask, sink, signal) : runBaseline(runtime, ask, sink, signal)));
}

async function retrieveOrFail(runtime: PipelineRuntime, ask: ResolvedAsk, k: number, sink: EventSink, signal: AbortSignal) {
  const [retrieval, ms] = await timed(() => retrieve(runtime, ask, k, signal), "retrieve");
  sink.emit({ $case: "retrieved", value: retrieval.event });
  if (retrieval.chunks.length === 0) {
    const stored = (await runtime.backends.index.getStats(signal)).chunks;
    throw new ServiceError(
      status.NOT_FOUND,
      `retrieval (${ask.mode}) found no chunks for the question in ${stored} stored chunks; ingest documents, relax the filters, or try another retrieval mode`,
    );
  }
  return { retrieval, ms };
}

async function runAttrRag(runtime: PipelineRuntime, ask: ResolvedAsk, sink: EventSink, signal: AbortSignal): Promise<void> {
  const timings: Partial<StageTimings> = {};
  const warnings: string[] = [];
  const { retrieval, ms } = await retrieveOrFail(runtime, ask, ask.k, sink, signal);
  timings.retrieveMs = ms;

  const [aligned, alignMs] = await timed(() => alignChunkSets(retrieval.chunks), "align");
  timings.alignMs = alignMs;
  sink.emit({ $case: "aligned", value: alignedEvent(aligned) });

  const [reranked, rerankMs] = await timed(() => rerankTexts(runtime, ask.question, retrieval.queryVector, aligned.map(chunkSetText), signal), "rerank");
  timings.rerankMs = rerankMs;
  if (reranked.fallback) warnings.push("re-ranker: no cross-encoder configured; sets were re-ranked by bi-encoder cosine (fallback:bi-encoder)");
  sink.emit({
    $case: "reranked",
    value: { sets: reranked.order.map((i) => ({ setId: aligned[i]!.id, score: reranked.scores[i]!, alignedIndex: i })), reranker: reranked.reranker, fallback: reranked.fallback },
  });
  const ordered = reranked.order.map((i) => aligned[i]!);

  const attributed = await attributeSets(
    runtime,
    {
      question: ask.question,
      sets: ordered.map((s) => ({ id: s.id, text: promptSafe(chunkSetText(s)), chunkSet: chunkSetToProto(s) })),
      generation: ask.generation,
      selection: ask.selection,
      attribution: ask.attribution,
      sentences: ask.sentences,
      includeOccludedAnswers: ask.includeOccludedAnswers,
      dropSetsThatDoNotFit: true,
      requestId: sink.requestId,
    },
    {
      onInitialDelta: (delta) => sink.emit({ $case: "initialAnswerDelta", value: delta }),
      onProgress: (progress) => sink.emit({ $case: "occlusionProgress", value: progress }),
    },
    signal,
  );
  warnings.push(...attributed.warnings);
  Object.assign(timings, attributed.timings);
  sink.emit({ $case: "attribution", value: attributed.table });
  sink.emit({ $case: "selection", value: attributed.selection });

  // Kept sets in re-rank order, their chunks and the gap fill laid out as the final context.
  const keptIds = new Set(attributed.selection.selectedSetIds);
  const kept: ChunkSet[] = ordered.filter((s) => keptIds.has(s.id));
  const blocks = finalContext(kept, ask.selection.maxGap, attributed.gapFill);
  sink.emit({ $case: "gapFill", value: attributed.gapFill });

  const [answer, finalMs] = await timed(() =>
    generateAnswer(runtime, sink.requestId, ask.question, blocks, ask.generation.maxTokens, (delta) => sink.emit({ $case: "finalAnswerDelta", value: delta }), signal, ask.sentences), "final_answer",
  );
  timings.finalAnswerMs = finalMs;
  warnings.push(...answer.warnings);
  sink.emit({ $case: "finalAnswer", value: answer.final });
  sink.emit({
    $case: "done",
    value: {
      timings: { ...timings, totalMs: sink.elapsedMs() },
      counters: addCounters(attributed.counters, answer.counters),
      occlusionCounters: attributed.counters,
      warnings,
    },
  });
}

async function runBaseline(runtime: PipelineRuntime, ask: ResolvedAsk, sink: EventSink, signal: AbortSignal): Promise<void> {
  const timings: Partial<StageTimings> = {};
  const warnings: string[] = [];
  const k = ask.baseline === "topk" ? ask.baselineK : Math.max(ask.k, ask.baselineK);
  const { retrieval, ms } = await retrieveOrFail(runtime, ask, k, sink, signal);
  timings.retrieveMs = ms;
  let chunks: RetrievedChunk[] = retrieval.chunks;
  if (ask.baseline === "rerank") {
    const [reranked, rerankMs] = await timed(() => rerankTexts(runtime, ask.question, retrieval.queryVector, chunks.map((c) => c.text), signal), "rerank");
    timings.rerankMs = rerankMs;
    if (reranked.fallback) warnings.push("re-ranker: no cross-encoder configured; chunks were re-ranked by bi-encoder cosine (fallback:bi-encoder)");
    sink.emit({
      $case: "reranked",
      value: { sets: reranked.order.map((i) => ({ setId: chunks[i]!.id, score: reranked.scores[i]!, alignedIndex: i })), reranker: reranked.reranker, fallback: reranked.fallback },
    });
    chunks = reranked.order.map((i) => chunks[i]!);
  }
  const blocks: AnswerBlock[] = chunks.slice(0, ask.baselineK).map((c) => ({ text: promptSafe(c.text), chunkIds: [c.id], chunkTexts: [c.text] }));
  const [answer, finalMs] = await timed(() =>
    generateAnswer(runtime, sink.requestId, ask.question, blocks, ask.generation.maxTokens, (delta) => sink.emit({ $case: "finalAnswerDelta", value: delta }), signal), "final_answer",
  );
  timings.finalAnswerMs = finalMs;
  warnings.push(...answer.warnings);
  sink.emit({ $case: "finalAnswer", value: answer.final });
  sink.emit({ $case: "done", value: { timings: { ...timings, totalMs: sink.elapsedMs() }, counters: answer.counters, warnings } });
}

function alignedEvent(sets: readonly ChunkSet[]): ChunkSetsAligned {
  return { sets: sets.map(chunkSetToProto) };
}

function chunkSetToProto(s: ChunkSet): ProtoChunkSet {
  return {
    setId: s.id,
    docId: s.docId,
    firstOrdinal: s.firstOrdinal,
    lastOrdinal: s.lastOrdinal,
    chunks: s.chunks.map((c) => ({ chunkId: c.id, ordinal: c.ordinal, retrievalRank: c.rank })),
    bestRetrievalRank: s.bestRank,
  };
}
