import { status } from "@grpc/grpc-js";
import type { TokenSegments } from "@attr-rag/engine";
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
