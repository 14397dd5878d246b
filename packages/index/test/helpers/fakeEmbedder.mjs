// A small deterministic stand-in for a real embedder (USE-lite and GGUF embedders come later in issue 4):
// a hashed bag of words, 64 dimensions, L2-normalised. Texts sharing words get similar vectors, a text and
// itself get cosine 1, so dense search is testable without a model. Plain .mjs so the crash child (which
// runs without a TypeScript loader) uses the very same function as the tests.

export const FAKE_EMBEDDER = Object.freeze({ id: "fake-hashed-bow-64", dimensions: 64 });

/** FNV-1a, 32 bit. */
function hash(word) {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) {
    h ^= word.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export function fakeEmbedVector(text) {
  const v = new Float32Array(FAKE_EMBEDDER.dimensions);
  for (const [word] of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    const h = hash(word);
    v[h % v.length] += h & 0x100 ? 1 : -1;
  }
  let norm = Math.hypot(...v);
  if (norm === 0) {
    v[0] = 1; // no words: a fixed unit vector rather than the all-zero vector the store rejects
    norm = 1;
  }
  return v.map((x) => x / norm);
}

/** The EmbedFunction shape: (texts) => Promise<Float32Array[]>. Counts calls so tests can see re-embedding. */
export const fakeEmbedCalls = { texts: 0 };
export async function fakeEmbed(texts) {
  fakeEmbedCalls.texts += texts.length;
  return texts.map(fakeEmbedVector);
}
