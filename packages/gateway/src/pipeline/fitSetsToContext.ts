import { status } from "@grpc/grpc-js";
import type { EngineContext, OcclusionStrategy, TokenSegments } from "@attr-rag/engine";
import { ServiceError } from "@attr-rag/index";

/**
 * How many leading sets (re-rank order) fit one sequence's KV window with the answer: prompt + max tokens
 * + 1 cells. The lowest re-ranked sets go first; if not even the first set fits, the request cannot run.
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
    throw new ServiceError(
      status.RESOURCE_EXHAUSTED,
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
export function occlusionSetsThatFit(generator: EngineContext, tokens: TokenSegments, maxTokens: number, strategy: OcclusionStrategy): number {
  let n = setsThatFit(tokens, maxTokens, generator.info.sequenceCells);
  const fits = (k: number) => generator.fitsOcclusion({ segments: { prefix: tokens.prefix, blocks: tokens.blocks.slice(0, k), suffix: tokens.suffix }, maxTokens, strategy });
  while (n > 0 && !fits(n)) n--;
  if (n === 0) {
    throw new ServiceError(
      status.RESOURCE_EXHAUSTED,
      `not even the best context set fits the ${strategy} occlusion run in one sequence of the generator context (${generator.info.sequenceCells} cells); ` +
        "raise contextSize, lower sequences, or ask for fewer max tokens",
    );
  }
  return n;
}
