export interface SyntheticDocument {
  readonly id: string;
  readonly title: string;
  readonly source: string;
  readonly license: string;
  readonly text: string;
}
/** Mulberry32: a tiny seeded PRNG. */
export declare function rng(seed: number): () => number;
export declare function markerOf(id: string, version: number): string;
export declare function makeDocument(id: string, version?: number, paragraphs?: number): SyntheticDocument;
export declare const TEST_CHUNKER: { readonly maxChars: number; readonly overlapChars: number };
