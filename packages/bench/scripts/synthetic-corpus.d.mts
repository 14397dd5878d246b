// Types for synthetic-corpus.mjs (used by packages/cli/test/syntheticCorpus.test.ts).
export interface SyntheticDocument {
  id: string;
  title: string;
  text: string;
  source: string;
  license: string;
}
export function syntheticCorpus(
  seed?: number,
  docChars?: number,
): { word(): string; textWord(): string; document(i: number): SyntheticDocument; words(): string; question(): string };
export function hashedEmbed(text: string, dims: number): Float32Array;
