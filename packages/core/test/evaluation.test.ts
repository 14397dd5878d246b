import { describe, expect, it } from "vitest";
import {
  ANSWER_METRICS,
  betterVerdict,
  bootstrapMean,
  goldAtCutoffs,
  goldChunkIds,
  JUDGE_CRITERIA,
  jaccardSimilarity,
  judgeMessages,
  locateSpan,
  majorityWinners,
  parseJudgeReply,
  quantileSorted,
  rougeScores,
  scoreAnswer,
  SeededRandom,
  sentenceBleu,
} from "../src/index.js";

describe("scoreAnswer", () => {
  const ref = "Dissolve the amine in water.\nAdd acetic anhydride and heat for ten minutes.";
  const answer = "Add acetic anhydride to the amine and heat it.";
  const v = { answer: [1, 0, 1], reference: [1, 1, 0] };

  it("is Table I's seven scores: ROUGE F1, sacrebleu sentence BLEU on a 0-1 scale, Jaccard, cosine of the embeddings", () => {
    const s = scoreAnswer(answer, ref, v);
    expect(Object.keys(s).sort()).toEqual([...ANSWER_METRICS].sort());
    const rouge = rougeScores(ref, answer);
    expect(s.rouge1).toBe(rouge.rouge1.fmeasure);
    expect(s.rougeLsum).toBe(rouge.rougeLsum.fmeasure);
    expect(s.bleu).toBeCloseTo(sentenceBleu(answer, ref).score / 100, 15);
    expect(s.bleu).toBeGreaterThan(0);
    expect(s.bleu).toBeLessThan(1);
    expect(s.jaccard).toBe(jaccardSimilarity(ref, answer));
    expect(s.cosine).toBeCloseTo(0.5, 12);
  });

  it("gives 1 everywhere for the reference itself and 0 cosine for an empty answer", () => {
    const same = scoreAnswer(ref, ref, { answer: [0.3, 0.4], reference: [0.3, 0.4] });
    for (const m of ANSWER_METRICS) expect(same[m]).toBeCloseTo(1, 12);
    const empty = scoreAnswer("  ", ref, { answer: [0, 0], reference: [1, 0] });
    expect(empty.cosine).toBe(0);
    expect(empty.rouge1).toBe(0);
    expect(empty.bleu).toBe(0);
  });
});

describe("bootstrapMean", () => {
  it("interpolates quantiles as numpy.percentile does", () => {
    expect(quantileSorted([1, 2, 3, 4], 0.25)).toBeCloseTo(1.75, 15);
    expect(quantileSorted([1, 2, 3, 4], 0.975)).toBeCloseTo(3.925, 15);
    expect(quantileSorted([7], 0.5)).toBe(7);
  });

  it("resamples with SeededRandom(seed).below(n) and takes the percentile bounds", () => {
    const values = [0.1, 0.9, 0.35, 0.4, 0.72, 0.05, 0.6];
    const r = bootstrapMean(values, { resamples: 500, seed: 7 });
    const rng = new SeededRandom(7);
    const means: number[] = [];
    for (let b = 0; b < 500; b++) {
      let s = 0;
      for (let i = 0; i < values.length; i++) s += values[rng.below(values.length)]!;
      means.push(s / values.length);
    }
    means.sort((a, b) => a - b);
    expect(r.mean).toBeCloseTo(values.reduce((a, b) => a + b) / values.length, 15);
    expect(r.low).toBeCloseTo(quantileSorted(means, 0.025), 15);
    expect(r.high).toBeCloseTo(quantileSorted(means, 0.975), 15);
    expect(r.low).toBeLessThan(r.mean);
    expect(r.high).toBeGreaterThan(r.mean);
    expect(bootstrapMean(values, { resamples: 500, seed: 7 })).toEqual(r);
    expect(bootstrapMean(values, { resamples: 500, seed: 8 }).low).not.toBe(r.low);
  });

  it("has the normal-theory width on many values, and no width on constant ones or one value", () => {
    const values = Array.from({ length: 100 }, (_, i) => i);
    const r = bootstrapMean(values, { seed: 1 });
    // σ/√n = 28.87/10; 1.96 × that = 5.66 around 49.5.
    expect(r.low).toBeGreaterThan(49.5 - 6.5);
    expect(r.low).toBeLessThan(49.5 - 4.8);
    expect(r.high).toBeGreaterThan(49.5 + 4.8);
    expect(r.high).toBeLessThan(49.5 + 6.5);
    expect(bootstrapMean([0.3, 0.3, 0.3])).toMatchObject({ mean: 0.3, low: 0.3, high: 0.3, n: 3 });
    expect(bootstrapMean([0.4])).toEqual({ mean: 0.4, low: 0.4, high: 0.4, n: 1 });
    expect(() => bootstrapMean([])).toThrow(/no values/);
    expect(() => bootstrapMean([1, Number.NaN])).toThrow(/finite/);
    expect(() => bootstrapMean([1, 2], { confidence: 1 })).toThrow(/confidence/);
  });
});

describe("majorityWinners", () => {
  const metrics = ["a", "b", "c", "d", "e"];
  it("names the method best on more than half of the metrics; ties count for each tied method", () => {
    const r = majorityWinners(
      {
        x: { a: 0.9, b: 0.9, c: 0.1, d: 0.4, e: 0.2 },
        y: { a: 0.1, b: 0.9, c: 0.8, d: 0.5, e: 0.3 },
        z: { a: 0.2, b: 0.2, c: 0.2, d: 0.2, e: 0.1 },
      },
      metrics,
    );
    expect(r.bestPerMetric).toEqual({ a: ["x"], b: ["x", "y"], c: ["y"], d: ["y"], e: ["y"] });
    expect(r.winners).toEqual(["y"]); // y best on b, c, d, e (4 of 5); x on a, b (2 of 5)
    const half = majorityWinners({ x: { a: 1, b: 0 }, y: { a: 0, b: 1 } }, ["a", "b"]);
    expect(half.winners).toEqual([]); // 1 of 2 is not a majority
    expect(() => majorityWinners({ x: { a: 1 } }, ["a", "b"])).toThrow(/"x" has no value for "b"/);
  });
});

describe("judge rubric", () => {
  const full = Object.fromEntries(JUDGE_CRITERIA.map((c, i) => [c, i % 6]));
  it("asks for one JSON object with the six criteria and puts the three texts in the user message", () => {
    const [system, user] = judgeMessages("Q?", "REF", "ANS");
    for (const c of JUDGE_CRITERIA) expect(system!.content).toContain(`"${c}"`);
    expect(user!.content).toMatch(/Q\?[\s\S]*REF[\s\S]*ANS/);
  });

  it("reads a valid reply, bare or in a fenced block, and totals it", () => {
    const v = parseJudgeReply(JSON.stringify(full));
    expect(v.missing).toEqual([]);
    expect(v.total).toBe(0 + 1 + 2 + 3 + 4 + 5);
    expect(v.problem).toBeUndefined();
    expect(parseJudgeReply("```json\n" + JSON.stringify(full) + "\n```").total).toBe(15);
  });

  it("records unreadable or partial replies as missing, never as 0", () => {
    const bad = parseJudgeReply("The answer is good, 4/5.");
    expect(bad.missing).toEqual([...JUDGE_CRITERIA]);
    expect(bad.total).toBeNull();
    expect(bad.scores).toEqual({});
    expect(bad.problem).toMatch(/not JSON/);
    expect(parseJudgeReply('{"relevance": 4, "correctness": 3').missing).toHaveLength(6); // cut off mid-object
    expect(parseJudgeReply("[1,2,3]").problem).toBe("not a JSON object");
    const partial = parseJudgeReply(JSON.stringify({ relevance: 4, correctness: "3", completeness: 7, coherence: 2.5, clarity: null }));
    expect(partial.scores).toEqual({ relevance: 4, coherence: 2.5 });
    expect(partial.missing).toEqual(["correctness", "completeness", "clarity", "missing_steps"]);
    expect(partial.total).toBeNull();
    expect(partial.problem).toMatch(/correctness = "3" is not a number from 0 to 5/);
    expect(partial.problem).toMatch(/missing_steps absent/);
    expect(betterVerdict(partial, bad)).toBe(partial);
    expect(betterVerdict(bad, partial)).toBe(partial);
  });
});

describe("gold chunks (Fig. 1)", () => {
  const text = "Intro text. Step one: weigh 2 g.\nStep two:   heat to 80 C. Unrelated textbook passage here.";
  const chunks = [
    { id: "c0", start: 0, end: 20 },
    { id: "c1", start: 20, end: 45 },
    { id: "c2", start: 45, end: text.length },
  ];
  it("marks chunks overlapping a located span (exact or whitespace-loose); no spans at all → every chunk", () => {
    expect(locateSpan(text, "Step two: heat to 80 C.")).toEqual({ start: text.indexOf("Step two"), end: text.indexOf(" Unrelated") });
    expect(goldChunkIds(text, chunks, ["Step one: weigh 2 g."])).toEqual(["c0", "c1"]); // starts at 12, ends at 32
    expect(goldChunkIds(text, chunks, ["Step two: heat to 80 C."])).toEqual(["c1", "c2"]);
    expect(goldChunkIds(text, chunks, [])).toEqual(["c0", "c1", "c2"]);
    expect(goldChunkIds(text, chunks, ["not in the text"])).toEqual([]); // its steps are in another document
  });

  it("counts gold chunks in the top k and divides by k", () => {
    const r = goldAtCutoffs(["a", "g1", "b", "g2", "c", "d"], new Set(["g1", "g2", "g3"]), [1, 2, 5, 10]);
    expect(r).toEqual({ "1": { gold: 0, density: 0 }, "2": { gold: 1, density: 0.5 }, "5": { gold: 2, density: 0.4 }, "10": { gold: 2, density: 0.2 } });
    expect(() => goldAtCutoffs([], new Set(), [0])).toThrow(/k must be/);
  });
});
