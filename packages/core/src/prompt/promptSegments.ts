/**
 * A prompt as segments, so the engine can share KV-cache prefixes between the full prompt and its occluded
 * variants: `prefix` (template head, system, question), one `block` per chunk set in re-rank order, then
 * `suffix` (instruction, template tail). Occluding set j drops `blocks[j]` and nothing else, so every
 * other block keeps its label and the first j blocks are a prefix shared with the full prompt.
 */
export interface PromptSegments {
  readonly prefix: string;
  readonly blocks: readonly string[];
  readonly suffix: string;
}

/** Concatenates the segments; `omit` is the index of a block to leave out (occlusion). */
export function renderPrompt(segments: PromptSegments, omit?: number): string {
  if (omit !== undefined) checkBlockIndex(segments, omit);
  return segments.prefix + segments.blocks.filter((_, i) => i !== omit).join("") + segments.suffix;
}

/** The prompt with block j removed, still as segments. */
export function occludeSegments(segments: PromptSegments, j: number): PromptSegments {
  checkBlockIndex(segments, j);
  return { prefix: segments.prefix, blocks: segments.blocks.filter((_, i) => i !== j), suffix: segments.suffix };
}

/** The full prompt and each occluded variant: element 0 is full, element j + 1 omits block j. */
export function occlusionPrompts(segments: PromptSegments): string[] {
  return [renderPrompt(segments), ...segments.blocks.map((_, j) => renderPrompt(segments, j))];
}

/** Length (characters) of the text the full prompt and the variant without block j have in common up front. */
export function sharedPrefixChars(segments: PromptSegments, j: number): number {
  checkBlockIndex(segments, j);
  return segments.prefix.length + segments.blocks.slice(0, j).reduce((s, b) => s + b.length, 0);
}

function checkBlockIndex(segments: PromptSegments, j: number): void {
  if (!Number.isInteger(j) || j < 0 || j >= segments.blocks.length) {
    throw new RangeError(`prompt: block index ${j} is out of range; the prompt has ${segments.blocks.length} context blocks`);
  }
}
