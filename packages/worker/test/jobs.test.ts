import { EngineStrategy, FinishReason, JobErrorCode, type JobProgress, type OcclusionJob } from "@attr-rag/contracts";
import { buildPromptSegments, RESERVED_CONTEXT_MARK } from "@attr-rag/core";
import { defaultModelPath, Model, type EngineContext } from "@attr-rag/engine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JobFailure } from "../src/jobFailure.js";
import { runGenerationJob } from "../src/runGenerationJob.js";
import { runLikelihoodJob } from "../src/runLikelihoodJob.js";
import { runOcclusionJob } from "../src/runOcclusionJob.js";

const QUESTION = "What did Lily do?";
const SETS = ["Lily went to the park with her dog.", "Tom found a red ball under the tree.", "The sun was warm and the birds sang.", "Mom made cookies for everyone."];
const signal = new AbortController().signal;

function occlusionJob(overrides: Partial<OcclusionJob> = {}): OcclusionJob {
  return {
    jobId: "job-1",
    requestId: "req-1",
    context: { question: QUESTION, sets: SETS.map((text, i) => ({ setId: `s${i}`, segment: { content: { $case: "text", value: text } } })) },
    generation: { maxTokens: 16, strategy: EngineStrategy.ENGINE_STRATEGY_PREFIX_SHARED },
    occludeSetIndices: [],
    deadlineUnixMs: 0,
    streamProgress: true,
    dropSetsThatDoNotFit: false,
    scoreAnswerTokens: false,
    ...overrides,
  };
}

async function failure(p: Promise<unknown>): Promise<JobFailure> {
  try {
    await p;
  } catch (err) {
    if (err instanceof JobFailure) return err;
    throw err;
  }
  throw new Error("expected a JobFailure");
}

describe("engine jobs", () => {
  let model: Model;
  let ctx: EngineContext;
  beforeAll(async () => {
    model = await Model.load(defaultModelPath());
    ctx = await model.createContext({ contextSize: 8192, sequences: 4, threads: 1 });
  });
  afterAll(async () => {
    await model?.dispose();
  });

  it("worker jobs - an occlusion job streams A_full's deltas, then the counts, and returns what the engine's own occlusion gives", async () => {
    const progress: JobProgress[] = [];
    const result = await runOcclusionJob(ctx, occlusionJob(), (p) => progress.push(p), signal, "w1");
    // The same prompt through the engine directly: same tokens for A_full and every A_-j.
    const direct = await ctx.occlude({ segments: buildPromptSegments({ question: QUESTION, sets: SETS }, model.chatTemplate()), maxTokens: 16, strategy: "prefix-shared" });
    expect(result.fullAnswer!.tokenIds).toEqual(Array.from(direct.full.tokens));
    expect(result.occluded.map((o) => o.answer!.tokenIds)).toEqual(direct.occluded.map((o) => Array.from(o.tokens)));
    expect(result.occluded.map((o) => [o.setIndex, o.setId])).toEqual(SETS.map((_, i) => [i, `s${i}`]));
    expect(result).toMatchObject({ jobId: "job-1", requestId: "req-1", workerId: "w1", setsUsed: 4, sequenceCells: 2048 });
    expect(result.setTokens).toHaveLength(4);
    expect(result.counters!.sequences).toBe(5);
    expect(result.counters!.tokensReused).toBeGreaterThan(0);

    // Progress: sequence numbers 0..n-1; A_full's deltas first (they add up to it, the last says why it
    // stopped), then one count per occluded answer.
    expect(progress.map((p) => p.sequence)).toEqual(progress.map((_, i) => i));
    expect(progress.every((p) => p.jobId === "job-1" && p.workerId === "w1")).toBe(true);
    const deltas = progress.filter((p) => p.progress?.$case === "answerDelta").map((p) => (p.progress as { value: { text: string; finishReason: FinishReason } }).value);
    const counts = progress.filter((p) => p.progress?.$case === "occlusion").map((p) => (p.progress as { value: { done: number; total: number } }).value);
    expect(progress.findIndex((p) => p.progress?.$case === "occlusion")).toBe(deltas.length);
    expect(deltas.map((d) => d.text).join("")).toBe(result.fullAnswer!.text);
    expect(deltas.at(-1)!.finishReason).toBe(FinishReason.FINISH_REASON_LENGTH);
    expect(deltas.slice(0, -1).every((d) => d.finishReason === FinishReason.FINISH_REASON_UNSPECIFIED)).toBe(true);
    expect(counts).toEqual([1, 2, 3, 4].map((done) => ({ done, total: 4, finished: [] })));
    expect(ctx.sequencesInUse()).toBe(0);
  });

  it("worker jobs - an approximate strategy runs only when named, with its recompute windows, and the counters say which ran", async () => {
    const segments = buildPromptSegments({ question: QUESTION, sets: SETS }, model.chatTemplate());
    const exact = await runOcclusionJob(ctx, occlusionJob(), () => {}, signal);
    expect(exact.counters!.strategy).toBe(EngineStrategy.ENGINE_STRATEGY_PREFIX_SHARED);
    const unset = await runOcclusionJob(ctx, occlusionJob({ generation: { maxTokens: 16, strategy: EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED } }), () => {}, signal);
    expect(unset.counters!.strategy).toBe(EngineStrategy.ENGINE_STRATEGY_SPECULATIVE);
    const generation = { maxTokens: 16, strategy: EngineStrategy.ENGINE_STRATEGY_KV_REUSE, recomputeTail: 3 };
    const approx = await runOcclusionJob(ctx, occlusionJob({ generation }), () => {}, signal);
    expect(approx.counters!.strategy).toBe(EngineStrategy.ENGINE_STRATEGY_KV_REUSE);
    const direct = await ctx.occlude({ segments, maxTokens: 16, strategy: "kv-reuse", tailTokens: 3 });
    expect(approx.occluded.map((o) => o.answer!.tokenIds)).toEqual(direct.occluded.map((o) => Array.from(o.tokens)));
    expect(approx.counters!.tokensReused).toBeGreaterThan(exact.counters!.tokensReused);
    const gap = await failure(runOcclusionJob(ctx, occlusionJob({ generation: { ...generation, recomputeGap: 4 } }), () => {}, signal));
    expect(gap.code).toBe(JobErrorCode.JOB_ERROR_CODE_INVALID_ARGUMENT);
    expect(gap.message).toMatch(/needs a unified KV cache/);
    const tail = await failure(runOcclusionJob(ctx, occlusionJob({ generation: { ...generation, recomputeTail: 0 } }), () => {}, signal));
    expect(tail.message).toMatch(/recompute_tail must be ≥ 1/);
    expect(ctx.sequencesInUse()).toBe(0);
  });

  it("worker jobs - screen regenerates the top drops exactly, marks the others screened with A_full, and streams every count", async () => {
    const segments = buildPromptSegments({ question: QUESTION, sets: SETS }, model.chatTemplate());
    const progress: JobProgress[] = [];
    const generation = { maxTokens: 16, strategy: EngineStrategy.ENGINE_STRATEGY_SCREEN, screen: { topK: 2, regenerate: EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED } };
    const result = await runOcclusionJob(ctx, occlusionJob({ generation }), (p) => progress.push(p), signal);
    expect(result.counters!.strategy).toBe(EngineStrategy.ENGINE_STRATEGY_SCREEN);
    expect(result.counters!.sequences).toBe(5);
    // The screening pass on its own: the two largest drops are the regenerated sets.
    const exact = await ctx.occlude({ segments, maxTokens: 16, strategy: "naive" });
    const forced = await ctx.forced({ segments, strategy: "kv-reuse", full: exact.full.tokens, forced: SETS.map(() => exact.full.tokens) });
    const drops = forced.perSet.map((p) => forced.fullLogProb - p.logProb);
    const top2 = drops.map((d, j) => [d, j] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, 2).map(([, j]) => j).sort();
    expect(result.occluded.filter((o) => !o.screened).map((o) => o.setIndex)).toEqual(top2);
    result.occluded.forEach((o, j) => {
      expect(o.screenDrop).toBeCloseTo(drops[j]!, 3);
      // Regenerated answers are exact (speculative by default); screened ones are A_full.
      expect(o.answer!.tokenIds).toEqual(o.screened ? result.fullAnswer!.tokenIds : Array.from(exact.occluded[j]!.tokens));
    });
    expect(result.fullAnswer!.tokenIds).toEqual(Array.from(exact.full.tokens));
    const counts = progress.filter((p) => p.progress?.$case === "occlusion").map((p) => (p.progress as { value: { done: number } }).value.done);
    expect(counts).toEqual([1, 2, 3, 4]);
    expect(progress.findIndex((p) => p.progress?.$case === "occlusion")).toBeGreaterThan(0); // A_full's deltas first

    const both = await failure(runOcclusionJob(ctx, occlusionJob({ generation: { ...generation, screen: { topK: 1, threshold: 0.5, regenerate: 0 } } }), () => {}, signal));
    expect(both.code).toBe(JobErrorCode.JOB_ERROR_CODE_INVALID_ARGUMENT);
    expect(both.message).toMatch(/threshold or top_k, not both/);
    const stray = await failure(runOcclusionJob(ctx, occlusionJob({ generation: { maxTokens: 16, strategy: EngineStrategy.ENGINE_STRATEGY_NAIVE, screen: { topK: 1, regenerate: 0 } } }), () => {}, signal));
    expect(stray.message).toMatch(/generation.screen applies to the SCREEN strategy, not naive/);
    const loop = await failure(runOcclusionJob(ctx, occlusionJob({ generation: { ...generation, screen: { regenerate: EngineStrategy.ENGINE_STRATEGY_SCREEN } } }), () => {}, signal));
    expect(loop.message).toMatch(/regenerate cannot be SCREEN/);
    expect(ctx.sequencesInUse()).toBe(0);
  });

  it("worker jobs - a given A_full is used, not generated, and its tokens are the reference", async () => {
    const given = "Lily played with her dog all day.";
    const progress: JobProgress[] = [];
    const result = await runOcclusionJob(ctx, occlusionJob({ fullAnswerText: given }), (p) => progress.push(p), signal);
    expect(result.fullAnswer!.tokenIds).toEqual(Array.from(model.tokenize(given)));
    expect(progress.some((p) => p.progress?.$case === "answerDelta")).toBe(false);
    expect(result.counters!.sequences).toBe(5);
  });

  it("worker jobs - sets that do not fit one sequence are dropped lowest-ranked first when allowed, else RESOURCE_EXHAUSTED", async () => {
    const small = await model.createContext({ contextSize: 2048, sequences: 4 }); // 512 cells per sequence
    try {
      const long = Array.from({ length: 8 }, (_, i) => `${SETS[i % 4]} ${"And then they played again. ".repeat(4)}`);
      const job = occlusionJob({ context: { question: QUESTION, sets: long.map((text, i) => ({ setId: `s${i}`, segment: { content: { $case: "text", value: text } } })) } });
      const refused = await failure(runOcclusionJob(small, job, () => {}, signal));
      expect(refused.code).toBe(JobErrorCode.JOB_ERROR_CODE_RESOURCE_EXHAUSTED);
      expect(refused.message).toMatch(/^only the first \d of 8 sets fit one sequence of the generator context \(512 tokens with the answer\)/);
      const dropped = await runOcclusionJob(small, { ...job, dropSetsThatDoNotFit: true }, () => {}, signal);
      expect(dropped.setsUsed).toBeGreaterThan(0);
      expect(dropped.setsUsed).toBeLessThan(8);
      expect(dropped.occluded.map((o) => o.setId)).toEqual(long.slice(0, dropped.setsUsed).map((_, i) => `s${i}`));
      expect(dropped.sequenceCells).toBe(512);
    } finally {
      await small.dispose();
    }
  });

  it("worker jobs - malformed jobs fail with INVALID_ARGUMENT before the engine runs", async () => {
    const textSets = occlusionJob().context!.sets;
    const cases: [Partial<OcclusionJob>, RegExp][] = [
      [{ context: undefined }, /exactly one of context and prompt/],
      [{ prompt: { sets: [] } }, /exactly one of context and prompt/],
      [{ context: { question: "   ", sets: textSets } }, /question is empty/],
      [{ context: { question: QUESTION, sets: [] } }, /no context sets/],
      [{ context: { question: `a ${RESERVED_CONTEXT_MARK} b`, sets: textSets } }, /reserved marker/],
      [{ generation: { maxTokens: 0, strategy: 0 } }, /max_tokens must be a positive integer/],
      [{ generation: { maxTokens: 8, strategy: 42 as EngineStrategy } }, /not a defined EngineStrategy/],
      [{ occludeSetIndices: [1] }, /occlude_set_indices is not supported/],
    ];
    for (const [overrides, message] of cases) {
      const err = await failure(runOcclusionJob(ctx, occlusionJob(overrides), () => {}, signal));
      expect(err.code, String(message)).toBe(JobErrorCode.JOB_ERROR_CODE_INVALID_ARGUMENT);
      expect(err.message).toMatch(message);
    }
    expect(ctx.sequencesInUse()).toBe(0);
  });

  it("worker jobs - a generation job answers from its blocks laid out as attribution lays them out; its deltas add up", async () => {
    const progress: JobProgress[] = [];
    const job = { jobId: "g1", requestId: "r", context: occlusionJob().context, generation: { maxTokens: 12, strategy: 0 }, deadlineUnixMs: 0, streamProgress: true };
    const result = await runGenerationJob(ctx, job, (p) => progress.push(p), signal);
    const tokens = model.tokenizeSegments(buildPromptSegments({ question: QUESTION, sets: SETS }, model.chatTemplate()));
    const direct = ctx.generate(Int32Array.from([...tokens.prefix, ...tokens.blocks.flatMap((b) => [...b]), ...tokens.suffix]), { maxTokens: 12 });
    let step = await direct.next();
    while (!step.done) step = await direct.next();
    expect(result.answer!.tokenIds).toEqual(Array.from(step.value.tokens));
    const deltas = progress.map((p) => (p.progress as { value: { text: string; finishReason: FinishReason } }).value);
    expect(deltas.map((d) => d.text).join("")).toBe(result.answer!.text);
    expect(deltas.at(-1)!.finishReason).toBe(FinishReason.FINISH_REASON_LENGTH);
    expect(result).toMatchObject({ setsUsed: 4, sequenceCells: 2048 });
    expect(result.counters!.decodeSteps).toBe(12);
  });

  it("worker jobs - a likelihood job scores each coalition as the engine does, and bad coalitions are INVALID_ARGUMENT", async () => {
    const target = "Lily and her dog played with a ball.";
    const coalitions = [[0, 1, 2, 3], [1, 2, 3], [0], []];
    const job = { jobId: "l1", requestId: "r", context: occlusionJob().context, target: { content: { $case: "text" as const, value: target } }, coalitions: coalitions.map((setIndices) => ({ setIndices })), deadlineUnixMs: 0, perToken: false };
    const result = await runLikelihoodJob(ctx, job, signal, "w1");
    const tokens = model.tokenizeSegments(buildPromptSegments({ question: QUESTION, sets: SETS }, model.chatTemplate()));
    const targetTokens = model.tokenize(target, { addSpecial: false, parseSpecial: false });
    const direct = await ctx.scoreContinuations({ segments: tokens, continuation: targetTokens, coalitions });
    expect(result.logLikelihoods).toEqual(direct.totals);
    expect(result.targetTokens).toBe(targetTokens.length);
    expect(result.logLikelihoods.every((v) => v < 0)).toBe(true);
    // Different contexts, different utilities: the sets reached the scoring.
    expect(new Set(result.logLikelihoods).size).toBeGreaterThan(1);
    expect(result).toMatchObject({ jobId: "l1", workerId: "w1", counters: { sequences: 4 } });
    const bad = await failure(runLikelihoodJob(ctx, { ...job, coalitions: [{ setIndices: [0, 9] }] }, signal));
    expect(bad.code).toBe(JobErrorCode.JOB_ERROR_CODE_INVALID_ARGUMENT);
    expect(bad.message).toMatch(/coalition 0 must list distinct block indices in \[0, 4\)/);
    const empty = await failure(runLikelihoodJob(ctx, { ...job, coalitions: [] }, signal));
    expect(empty.message).toMatch(/no coalitions/);
  });
});
