import { FinishReason, type AnswerDelta, type EngineCounters, type FinalAnswer } from "@attr-rag/contracts";
import { concatTokens } from "@attr-rag/engine";
import type { Runtime } from "../runtime/Runtime.js";
import { buildPrompt } from "./buildPrompt.js";
import { citeAnswer, type AnswerBlock } from "./citations.js";
import { closingDelta } from "./closingDelta.js";
import { generationCounters } from "./counters.js";
import { setsThatFit } from "./fitSetsToContext.js";

export interface GeneratedAnswer {
  final: FinalAnswer;
  counters: EngineCounters;
  warnings: string[];
}

/**
 * Step 8 (and the baselines' only generation): answers from the given blocks with the same prompt layout
 * as attribution, streams the text through `onDelta`, then cites the blocks' chunks.
 */
export async function generateAnswer(
  runtime: Runtime,
  question: string,
  blocks: readonly AnswerBlock[],
  maxTokens: number,
  onDelta: (delta: AnswerDelta) => void,
  signal: AbortSignal,
): Promise<GeneratedAnswer> {
  const { model, generator } = runtime;
  const warnings: string[] = [];
  let tokens = model.tokenizeSegments(buildPrompt(question, blocks.map((b) => b.text), model.chatTemplate()));
  const fit = setsThatFit(tokens, maxTokens, runtime.sequenceCells);
  if (fit < blocks.length) {
    warnings.push(`context window: the answer used the first ${fit} of ${blocks.length} context blocks; raise contextSize or lower sequences`);
    blocks = blocks.slice(0, fit);
    tokens = { prefix: tokens.prefix, blocks: tokens.blocks.slice(0, fit), suffix: tokens.suffix };
  }
  const prompt = concatTokens([tokens.prefix, ...tokens.blocks, tokens.suffix]);
  const started = performance.now();
  const stream = generator.generate(prompt, { maxTokens, signal });
  let emitted = "";
  let next = await stream.next();
  while (!next.done) {
    if (next.value.text !== "") {
      emitted += next.value.text;
      onDelta({ text: next.value.text, finishReason: FinishReason.FINISH_REASON_UNSPECIFIED });
    }
    next = await stream.next();
  }
  const answer = next.value;
  onDelta(closingDelta(answer, emitted));
  const elapsed = performance.now() - started;
  const citations = await citeAnswer(answer.text, blocks, runtime.embedder, signal);
  return {
    final: { text: answer.text, citations, contextChunkIds: blocks.flatMap((b) => b.chunkIds) },
    counters: generationCounters(prompt.length, answer, elapsed),
    warnings,
  };
}
