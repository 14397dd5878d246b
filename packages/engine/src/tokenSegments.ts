/**
 * A prompt as token segments (see core's PromptSegments): the engine shares the KV cache of `prefix` and
 * of the blocks before an occluded one. Tokenizing per segment, not the whole string, is what makes every
 * strategy see exactly the same tokens.
 */
export interface TokenSegments {
  readonly prefix: Int32Array;
  readonly blocks: readonly Int32Array[];
  readonly suffix: Int32Array;
}

export function segmentsLength(s: TokenSegments): number {
  return s.prefix.length + s.blocks.reduce((n, b) => n + b.length, 0) + s.suffix.length;
}

export function concatTokens(parts: readonly Int32Array[]): Int32Array {
  const out = new Int32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
