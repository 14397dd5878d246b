// The benchmarks' synthetic corpus must be a corpus: its generator once multiplied in doubles past 2^53 and
// cycled after 16,403 draws, so a million-chunk benchmark indexed 97 documents over and over.
import { describe, expect, it } from "vitest";
import { syntheticCorpus } from "../../bench/scripts/synthetic-corpus.mjs";

describe("synthetic corpus", () => {
  it("has no repeated documents or questions, and the same seed gives the same corpus", () => {
    const a = syntheticCorpus();
    const texts = new Set<string>();
    for (let i = 0; i < 3000; i++) texts.add(a.document(i).text);
    expect(texts.size).toBe(3000);
    const questions = new Set(Array.from({ length: 2000 }, a.question));
    expect(questions.size).toBe(2000);
    const b = syntheticCorpus();
    expect(b.document(0).text).toBe(syntheticCorpus().document(0).text);
    expect(syntheticCorpus(7).document(0).text).not.toBe(b.document(0).text);
  });

  it("draws words with Zipf frequencies: the commonest word about twice as often as the second", () => {
    const c = syntheticCorpus(99);
    const counts = new Map<string, number>();
    for (let i = 0; i < 200_000; i++) {
      const w = c.word();
      counts.set(w, (counts.get(w) ?? 0) + 1);
    }
    const top = [...counts.values()].sort((x, y) => y - x);
    expect(top[0]! / top[1]!).toBeGreaterThan(1.8);
    expect(top[0]! / top[1]!).toBeLessThan(2.2);
    // 20,000 words, most rare: a long tail well past the first thousand ranks is drawn.
    expect(counts.size).toBeGreaterThan(10_000);
  });
});
