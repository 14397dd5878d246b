// A job's prompt as the engine's token segments, and how much of it fits one sequence of the context. The
// worker renders the SPEC layout with its own model's chat template, so a gateway without a model can send
// the question and the texts (QuestionContext).
import type { PromptSegment, QuestionContext, SegmentedPrompt } from "@attr-rag/contracts";
import { buildPromptSegments } from "@attr-rag/core";
import type { EngineContext, ModelHandle, OcclusionStrategy, TokenSegments } from "@attr-rag/engine";
import { invalidJob, jobTooLarge } from "./jobFailure.js";

export interface JobPrompt {
  readonly tokens: TokenSegments;
  readonly setIds: readonly string[];
}

export function jobPrompt(model: ModelHandle, job: { context?: QuestionContext | undefined; prompt?: SegmentedPrompt | undefined }): JobPrompt {
  if ((job.context === undefined) === (job.prompt === undefined)) throw invalidJob("the job must carry exactly one of context and prompt");
  if (job.context !== undefined) {
    const { question, sets } = job.context;
    let segments;
    try {
      segments = buildPromptSegments({ question, sets: sets.map((s, i) => textOf(s.segment, `context.sets[${i}]`)) }, model.chatTemplate());
    } catch (err) {
      if (err instanceof RangeError) throw invalidJob(err.message.replace(/^buildPromptSegments: /, ""));
      throw err;
    }
    return { tokens: model.tokenizeSegments(segments), setIds: sets.map((s) => s.setId) };
  }
  const p = job.prompt!;
  const all = [p.prefix, ...p.sets.map((s) => s.segment), p.suffix];
  const setIds = p.sets.map((s) => s.setId);
  if (all.every((s) => s?.content?.$case === "tokens")) {
    const ids = (s: PromptSegment | undefined) => Int32Array.from(s!.content!.$case === "tokens" ? s!.content!.value.ids : []);
    return { tokens: { prefix: ids(p.prefix), blocks: p.sets.map((s) => ids(s.segment)), suffix: ids(p.suffix) }, setIds };
  }
  return {
    tokens: model.tokenizeSegments({ prefix: textOf(p.prefix, "prompt.prefix"), blocks: p.sets.map((s, i) => textOf(s.segment, `prompt.sets[${i}]`)), suffix: textOf(p.suffix, "prompt.suffix") }),
    setIds,
  };
}

function textOf(segment: PromptSegment | undefined, what: string): string {
  if (segment?.content?.$case !== "text") throw invalidJob(`${what} must be text (a prompt mixes text and token segments only if all are tokens)`);
  return segment.content.value;
}

/**
 * How many leading sets (re-rank order) fit one sequence's KV window with the answer: prompt + max tokens
 * + 1 cells. The lowest re-ranked sets go first; if not even the first set fits, the job cannot run.
 */
export function setsThatFit(tokens: TokenSegments, maxTokens: number, sequenceCells: number): number {
  const fixed = tokens.prefix.length + tokens.suffix.length + maxTokens + 1;
  let used = fixed;
  let n = 0;
  for (const block of tokens.blocks) {
    if (used + block.length > sequenceCells) break;
    used += block.length;
    n++;
  }
  if (n === 0 && tokens.blocks.length > 0) {
    throw jobTooLarge(
      `the question, the best context set (${tokens.blocks[0]!.length} tokens) and ${maxTokens} answer tokens need ${fixed + tokens.blocks[0]!.length} KV cells, ` +
        `but one sequence of the generator context holds ${sequenceCells}; raise contextSize, lower sequences, or ask for fewer max tokens`,
    );
  }
  return n;
}

/**
 * As setsThatFit, refined with the engine's own check for the occlusion run (the speculative strategy keeps
 * room for drafts; a unified cache needs room for the suffixes), dropping more sets until it fits.
 */
export function occlusionSetsThatFit(generator: EngineContext, tokens: TokenSegments, maxTokens: number, strategy: OcclusionStrategy | readonly OcclusionStrategy[]): number {
  // Screening runs two engine strategies on the same prompt; both must fit.
  const strategies: readonly OcclusionStrategy[] = typeof strategy === "string" ? [strategy] : strategy;
  let n = setsThatFit(tokens, maxTokens, generator.info.sequenceCells);
  const fits = (k: number) =>
    strategies.every((s) => generator.fitsOcclusion({ segments: { prefix: tokens.prefix, blocks: tokens.blocks.slice(0, k), suffix: tokens.suffix }, maxTokens, strategy: s }));
  while (n > 0 && !fits(n)) n--;
  if (n === 0) {
    throw jobTooLarge(
      `not even the best context set fits the ${strategies.join(" + ")} occlusion run in one sequence of the generator context (${generator.info.sequenceCells} cells); ` +
        "raise contextSize, lower sequences, or ask for fewer max tokens",
    );
  }
  return n;
}
