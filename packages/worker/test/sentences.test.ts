// Sentence-level attribution on real outputs of stories260K. It ignores instructions, but copies what its
// prompt repeats: "blue" from a set that says "Spot liked to eat blue socks." three times, "truck" from one
// that says "Tim had a big red truck." four times. The occlusion job scores A_full per token; core sums per
// sentence, as the gateway does.
import { EngineStrategy, type OcclusionJob, type OcclusionResult } from "@attr-rag/contracts";
import { attributeSentences, DEFAULT_SENTENCE_THRESHOLD, type SentenceAttribution } from "@attr-rag/core";
import { defaultModelPath, Model, type EngineContext } from "@attr-rag/engine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runOcclusionJob } from "../src/runOcclusionJob.js";

const BLUE = "Spot liked to eat blue socks. Spot liked to eat blue socks. Spot liked to eat blue socks.";
const TRUCK = "Tim had a big red truck. Tim had a big red truck. Tim had a big red truck. Tim had a big red truck.";
const NOISE = "Mom made warm soup and everyone sat at the table.";
const signal = new AbortController().signal;

function job(sets: readonly string[], suffix: string, strategy = EngineStrategy.ENGINE_STRATEGY_SPECULATIVE): OcclusionJob {
  const text = (value: string) => ({ content: { $case: "text" as const, value } });
  return {
    jobId: "sentences",
    requestId: "sentences",
    // A story layout (no chat template): the context right before the story goes on.
    prompt: { prefix: text("Tell me a story.\n"), sets: sets.map((s, i) => ({ setId: `s${i}`, segment: text(`${s}\n`) })), suffix: text(suffix) },
    generation: { maxTokens: 24, strategy },
    occludeSetIndices: [],
    deadlineUnixMs: 0,
    streamProgress: false,
    dropSetsThatDoNotFit: false,
    scoreAnswerTokens: true,
  };
}

function sentencesOf(r: OcclusionResult): SentenceAttribution[] {
  const a = r.answerScores!;
  return attributeSentences(r.fullAnswer!.text, { tokenOffsets: a.tokenOffsets, full: a.full, noContext: a.noContext, withoutSet: a.withoutSet.map((w) => w.logProbs) });
}

const argmax = (v: readonly number[]) => v.indexOf(Math.max(...v));

describe("sentence-level attribution on stories260K's own answers", () => {
  let model: Model;
  let ctx: EngineContext;
  beforeAll(async () => {
    model = await Model.load(defaultModelPath());
    ctx = await model.createContext({ contextSize: 8192, sequences: 4, threads: 1 });
  });
  afterAll(async () => {
    await model?.dispose();
  });

  for (const [word, set, suffix] of [["blue", BLUE, "Spot liked to"], ["truck", TRUCK, "Tim had a"]] as const) {
    it(`the sentence that copies "${word}" has its largest drop at the set it copies; the noise set's drop is near 0 (either order)`, async () => {
      for (const sets of [[set, NOISE], [NOISE, set]]) {
        const r = await runOcclusionJob(ctx, job(sets, suffix), () => {}, signal);
        const copy = sets.indexOf(set);
        const sentences = sentencesOf(r);
        const copied = sentences.find((s) => s.text.includes(word));
        expect(copied, `A_full ${JSON.stringify(r.fullAnswer!.text)} should copy "${word}"`).toBeDefined();
        expect(argmax(copied!.drops)).toBe(copy);
        expect(copied!.drops[copy]!).toBeGreaterThan(3);
        expect(Math.abs(copied!.drops[1 - copy]!)).toBeLessThan(0.5);
        expect(copied!.topSets).toEqual([copy]);
        expect(copied!.supported).toBe(true);
        // The copied word is the context's doing: far likelier with the sets than with none.
        expect(copied!.logProbFull - copied!.logProbNoContext).toBeGreaterThan(3);
      }
    });
  }

  it("two identical sets split the effect: leaving either out drops the copied sentence by little (leave-one-out)", async () => {
    const alone = sentencesOf(await runOcclusionJob(ctx, job([BLUE, NOISE], "Spot liked to"), () => {}, signal)).find((s) => s.text.includes("blue"))!;
    const twice = await runOcclusionJob(ctx, job([BLUE, BLUE, NOISE], "Spot liked to"), () => {}, signal);
    const copied = sentencesOf(twice).find((s) => s.text.includes("blue"))!;
    expect(copied.drops[0]).toBeCloseTo(copied.drops[1]!, 4);
    expect(copied.drops[0]!).toBeLessThan(DEFAULT_SENTENCE_THRESHOLD);
    expect(copied.drops[0]!).toBeLessThan(alone.drops[0]! / 3);
    expect(copied.supported).toBe(false);
    // Yet the context as a whole still makes the sentence far likelier than no context.
    expect(copied.logProbFull - copied.logProbNoContext).toBeGreaterThan(3);
  });

  // On this f16 KV cache batch shapes round K/V differently (5e-4 nats measured); the engine's exactness
  // suite holds 1e-4 per token on an f32 cache.
  it("every exact strategy gives the same sentence drops (within 2e-3 nats on an f16 KV cache)", async () => {
    const drops: number[][] = [];
    for (const strategy of [EngineStrategy.ENGINE_STRATEGY_NAIVE, EngineStrategy.ENGINE_STRATEGY_PREFIX_SHARED, EngineStrategy.ENGINE_STRATEGY_SPECULATIVE]) {
      drops.push(sentencesOf(await runOcclusionJob(ctx, job([TRUCK, NOISE], "Tim had a", strategy), () => {}, signal)).flatMap((s) => s.drops));
    }
    for (const d of drops.slice(1)) d.forEach((x, i) => expect(Math.abs(x - drops[0]![i]!)).toBeLessThan(2e-3));
  });

  it("an approximate strategy runs without sentence scores and says why", async () => {
    const r = await runOcclusionJob(ctx, { ...job([TRUCK, NOISE], "Tim had a", EngineStrategy.ENGINE_STRATEGY_KV_REUSE) }, () => {}, signal);
    expect(r.answerScores).toBeUndefined();
    expect(r.answerScoresSkipped).toMatch(/exact strategy/);
  });
});
