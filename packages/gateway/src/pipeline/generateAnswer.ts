import { FinishReason, type AnswerDelta, type EngineCounters, type FinalAnswer, type GenerationResult } from "@attr-rag/contracts";
import { closingDelta } from "@attr-rag/worker";
import type { PipelineRuntime } from "../runtime/pipelineRuntime.js";
import { citeAnswer, type AnswerBlock } from "./citations.js";
import { engineCall, newJobId, onceBySequence } from "./engineCalls.js";
import { embed } from "./retrieve.js";
import type { ResolvedSentences } from "./resolveAttribution.js";
import { addCounters } from "@attr-rag/worker";
import { attributionCitations, sentencesByLikelihood } from "./sentenceAttributions.js";

export interface GeneratedAnswer {
  final: FinalAnswer;
  counters: EngineCounters;
  warnings: string[];
}

/**
 * Step 8 (and the baselines' only generation): a generation job answers from the given blocks with the same
 * prompt layout as attribution, streaming the text through `onDelta`; then the blocks' chunks are cited: by
 * sentence-level attribution against the blocks (ATTRIBUTION, unless switched off), by "[i]" markers and by
 * similarity.
 */
export async function generateAnswer(
  runtime: PipelineRuntime,
  requestId: string,
  question: string,
  blocks: readonly AnswerBlock[],
  maxTokens: number,
  onDelta: (delta: AnswerDelta) => void,
  signal: AbortSignal,
  sentences: ResolvedSentences = { enabled: false, threshold: 0 },
): Promise<GeneratedAnswer> {
  const warnings: string[] = [];
  const result = await streamGeneration(runtime, requestId, question, blocks.map((b) => b.text), maxTokens, onDelta, signal);
  const answer = result.answer!;
  if (result.setsUsed < blocks.length) {
    warnings.push(`context window: the answer used the first ${result.setsUsed} of ${blocks.length} context blocks; raise contextSize or lower sequences`);
    blocks = blocks.slice(0, result.setsUsed);
  }
  const citations = await citeAnswer(answer.text, blocks, (texts, s) => embed(runtime, texts, s), signal);
  let counters = result.counters!;
  const final: FinalAnswer = { text: answer.text, citations, contextChunkIds: blocks.flatMap((b) => b.chunkIds) };
  if (sentences.enabled) {
    const ids = blocks.map((_, i) => `[${i + 1}]`);
    const scored = await sentencesByLikelihood(runtime, requestId, question, blocks.map((b, i) => ({ id: ids[i]!, text: b.text })), answer, sentences.threshold, signal);
    if (scored.counters) counters = addCounters(counters, scored.counters);
    if (scored.sentences) {
      final.sentences = { ...scored.sentences, setChunks: blocks.map((b) => ({ chunkIds: [...b.chunkIds] })) };
      final.citations = [...attributionCitations(scored.sentences, blocks), ...citations].sort((a, b) => a.start - b.start || a.kind - b.kind);
    } else {
      warnings.push(`${scored.why}; final_answer.sentences is not set`);
    }
  }
  return { final, counters, warnings };
}

/** A generation job on the given context blocks, its answer streamed through `onDelta` (closed once). */
export async function streamGeneration(
  runtime: PipelineRuntime,
  requestId: string,
  question: string,
  texts: readonly string[],
  maxTokens: number,
  onDelta: (delta: AnswerDelta) => void,
  signal: AbortSignal,
  setIds: readonly string[] = texts.map((_, i) => String(i)),
): Promise<GenerationResult> {
  let emitted = "";
  let closed = false;
  const result = await engineCall(() =>
    runtime.backends.engine.generate(
      {
        jobId: newJobId("gen"),
        requestId,
        model: runtime.backends.modelId,
        context: { question, sets: texts.map((text, i) => ({ setId: setIds[i]!, segment: { content: { $case: "text", value: text } } })) },
        generation: { maxTokens, strategy: 0 },
        deadlineUnixMs: 0,
        streamProgress: true,
      },
      onceBySequence((p) => {
        if (closed || p.progress?.$case !== "answerDelta") return;
        const delta = p.progress.value;
        emitted += delta.text;
        if (delta.finishReason !== FinishReason.FINISH_REASON_UNSPECIFIED) closed = true;
        onDelta(delta);
      }),
      signal,
    ),
  );
  if (!closed) onDelta(closingDelta(result.answer!, emitted));
  return result;
}
