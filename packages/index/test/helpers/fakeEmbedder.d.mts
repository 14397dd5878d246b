export declare const FAKE_EMBEDDER: { readonly id: string; readonly dimensions: number };
export declare function fakeEmbedVector(text: string): Float32Array;
export declare const fakeEmbedCalls: { texts: number };
export declare function fakeEmbed(texts: readonly string[]): Promise<Float32Array[]>;
