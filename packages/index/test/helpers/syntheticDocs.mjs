// Deterministic documents for the store tests and the crash child: several paragraphs of pseudo-random
// words, each paragraph carrying the document's marker word (`m<id>v<version>`, digits and letters only)
// so BM25 can find every chunk of a given version of a document and no other.

const WORDS = (
  "acid base solvent reflux filter crystal yield heat cool stir flask beaker amine ester ketone aldehyde " +
  "benzene toluene ethanol water ice bath dropwise funnel vacuum dry weigh dissolve react quench extract " +
  "wash brine sodium sulfate column silica elute evaporate residue melting point spectrum nitrogen argon " +
  "catalyst palladium hydrogen pressure vessel temperature minutes hours overnight purify recrystallize"
).split(" ");

/** Mulberry32: a tiny seeded PRNG, so the same (id, version) always gives the same text. */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function seedOf(text) {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

export function markerOf(id, version) {
  return `m${id.replace(/[^a-z0-9]/gi, "")}v${version}`;
}

export function makeDocument(id, version = 1, paragraphs = 4) {
  const random = rng(seedOf(`${id}/${version}`));
  const marker = markerOf(id, version);
  const paras = [];
  for (let p = 0; p < paragraphs; p++) {
    const words = [marker];
    const n = 20 + Math.floor(random() * 15);
    for (let w = 0; w < n; w++) words.push(WORDS[Math.floor(random() * WORDS.length)]);
    paras.push(`${words.join(" ")}.`);
  }
  return { id, title: `Procedure ${id}`, source: `source-${seedOf(id) % 3}`, license: "CC-BY-4.0", text: paras.join("\n\n") };
}

/** Chunker settings that turn each paragraph of makeDocument into its own chunk. */
export const TEST_CHUNKER = Object.freeze({ maxChars: 300, overlapChars: 0 });
