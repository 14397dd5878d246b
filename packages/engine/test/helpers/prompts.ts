import { buildPromptSegments, type ChatTemplate } from "@attr-rag/core";

const SENTENCES = [
  "Lily had a red ball and a small dog named Max.",
  "One day the sun was very hot and the birds were quiet.",
  "Tom found a big box under the old tree in the park.",
  "Mom made warm soup and everyone sat at the table.",
  "The little boat went down the river to the sea.",
  "Sue liked to paint flowers with bright colors.",
  "A cat jumped on the fence and looked at the moon.",
  "The children built a tall tower of blocks.",
  "Grandpa told a funny story about a silly frog.",
  "It started to rain, so they ran inside the house.",
  "Ben shared his cookies with his best friend.",
  "The bunny hopped over the green grass to find a carrot.",
];

/** Deterministic PRNG so every run builds the same prompts. */
export function rng(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

/** Chunk sets of 1-3 story sentences each; `n` sets, contents varied by `seed`. */
export function storySets(n: number, seed: number): string[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => {
    const k = 1 + Math.floor(r() * 3);
    return Array.from({ length: k }, () => SENTENCES[Math.floor(r() * SENTENCES.length)]!).join(" ");
  });
}

const storyTemplate: ChatTemplate = (messages) => messages.map((m) => m.content).join("\n") + "\nOnce upon a time,";

/** Story-style prompt segments: tiny story models continue them (they ignore instructions). */
export function storySegments(n: number, seed: number, question = "What happened next?") {
  return buildPromptSegments({ question, sets: storySets(n, seed), system: "", instruction: "Tell the story." }, storyTemplate);
}
