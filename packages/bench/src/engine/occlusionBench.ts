import { compareSequences, EngineArgumentError, EXACT_STRATEGIES, isApproximate, OCCLUSION_STRATEGIES, segmentsLength, type ApproximateStrategy, type EngineContext, type ModelHandle, type OcclusionResult, type ScreenResult, type TokenSegments } from "@attr-rag/engine";
import { buildPromptSegments } from "@attr-rag/core";
import { measureFidelity, type Fidelity } from "./occlusionFidelity.js";
import { measureSentenceCost, type SentenceCost } from "./sentenceCost.js";
import { engineCost, measureDeviceCeiling, type DeviceCeiling, type EngineCost } from "./deviceCeiling.js";

export interface OcclusionBenchOptions {
  sets: number;
  setTokens: number;
  maxTokens: number;
  /** Engine strategies, and "screen" (APPROXIMATE hierarchical occlusion, ctx.screen with its defaults). */
  strategies: readonly BenchStrategy[];
  /**
   * Approximate strategies run once per value: prompt tokens recomputed before the suffix, on top of the suffix
   * (default [0]: the suffix only). Entries other than 0 are named like "kv-reuse+16".
   */
  recompute?: readonly number[];
  /** screen: sets regenerated (default ⌈n / 2⌉). */
  screenTopK?: number;
  /** Texts to cut context sets from (in order; consecutive windows of `setTokens` tokens). */
  corpus: readonly string[];
  question?: string;
  /**
   * Also measure sentence-level attribution's cost: each exact strategy among `strategies` runs this many
   * times without and with A_full's per-token scores, alternately (0: not measured).
   */
  sentenceRuns?: number;
  /**
   * Where the approximate strategies' fidelity is measured: it compares whole next-token distributions, which
   * needs a context with sampling "host". Default `ctx` (which must then be on the host path).
   */
  fidelityContext?: EngineContext;
  /** (done, total, label) after each finished answer. */
  onProgress?: (done: number, total: number, label: string) => void;
}

export const BENCH_STRATEGIES = [...OCCLUSION_STRATEGIES, "screen"] as const;
export type BenchStrategy = (typeof BENCH_STRATEGIES)[number];

const approximateEntry = (s: BenchStrategy) => s === "screen" || isApproximate(s);

export interface StrategyReport {
  wall_ms: number;
  tokens_evaluated: number;
  tokens_reused: number;
  draft_accepted: number;
  decode_steps: number;
  /** Answers token-identical to naive's; null when naive did not run in the same invocation, or for naive itself. */
  sequences_identical: number | null;
  sequences_total: number;
  /** Where answers first differ from naive's; null when there was nothing to compare with. */
  first_divergences: { seq: number; step: number; naive_margin: number }[] | null;
  /** Approximate strategies only (absent for exact ones): what ran, and how it compares with exact. */
  approximate?: true;
  tail_tokens?: number;
  /** screen only: sets regenerated (exactly) and screened out (answer = A_full). */
  regenerated?: number;
  screened?: number;
  /** Null when no exact strategy ran in the same invocation. */
  fidelity?: Fidelity | null;
  /** What reading the output rows cost, and the share of the wall in llama_decode. */
  engine: EngineCost;
}

export interface OcclusionBenchReport {
  model: string;
  /** Parameters of the model (llama_model_n_params). */
  model_parameters: number;
  n_sets: number;
  prompt_tokens: number;
  max_tokens: number;
  single: { wall_ms: number; tokens_evaluated: number };
  strategies: Record<string, StrategyReport>;
  /** Largest naive margin at any divergence of an EXACT strategy (0 when every answer matched); null unless naive and another exact strategy ran together. */
  max_divergence_margin: number | null;
  /** sentenceRuns: per exact strategy, the occlusion stage without and with sentence-level attribution. */
  sentences?: Record<string, SentenceCost>;
  /** Where rows were read ("device" picks in the graph, or "host" scans) and why a device request ran on the host. */
  sampling: "device" | "host";
  sampling_why: string;
  /** The device's own rate in this run: tokens per second of one full batch inside llama_decode. */
  device_ceiling: DeviceCeiling;
}

/** The question every bench asks of its context sets. */
export const BENCH_QUESTION = "Explain all the steps of the experiments described above, in order.";

/** A bench prompt as token segments: `sets` context sets cut from the corpus, the question, the model's chat template. */
export function benchPromptSegments(model: ModelHandle, corpus: readonly string[], sets: number, setTokens: number, question = BENCH_QUESTION): TokenSegments {
  return model.tokenizeSegments(buildPromptSegments({ question, sets: benchSets(model, corpus, sets, setTokens) }, model.chatTemplate()));
}

/** Context sets of about `setTokens` tokens each, cut from the corpus at token boundaries. */
function benchSets(model: ModelHandle, corpus: readonly string[], sets: number, setTokens: number): string[] {
  const tokens: number[] = [];
  for (const text of corpus) {
    tokens.push(...model.tokenize(text));
    if (tokens.length >= sets * setTokens) break;
  }
  if (tokens.length < sets * setTokens) {
    throw new EngineArgumentError(`the corpus has only ${tokens.length} tokens; ${sets} sets of ${setTokens} need ${sets * setTokens}`);
  }
  return Array.from({ length: sets }, (_, i) => model.detokenize(tokens.slice(i * setTokens, (i + 1) * setTokens)).trim());
}

/**
 * Runs one plain generation of A_full and then the whole occlusion workload once per strategy, and compares
 * every other strategy's n + 1 answers with naive's token by token. Strategies run in the order given. Only
 * naive can be the reference: without it, or for naive itself, the agreement fields are null, never a
 * comparison that did not happen.
 */
export async function runOcclusionBench(ctx: EngineContext, o: OcclusionBenchOptions): Promise<OcclusionBenchReport> {
  if (o.strategies.length === 0) throw new EngineArgumentError("give at least one strategy");
  for (const s of o.strategies) {
    if (!BENCH_STRATEGIES.includes(s)) throw new EngineArgumentError(`unknown strategy "${s}"; use ${BENCH_STRATEGIES.join(", ")}`);
  }
  const model = ctx.model;
  const segments = benchPromptSegments(model, o.corpus, o.sets, o.setTokens, o.question);
  const recompute = o.recompute ?? [0];
  if (recompute.length === 0 || recompute.some((x) => !Number.isInteger(x) || x < 0)) {
    throw new EngineArgumentError(`recompute values must be integers ≥ 0, got [${recompute.join(", ")}]`);
  }
  const entries = o.strategies.flatMap((strategy): { name: string; strategy: BenchStrategy; tailTokens: number | undefined }[] =>
    strategy !== "screen" && isApproximate(strategy)
      ? recompute.map((extra) => ({ name: extra === 0 ? strategy : `${strategy}+${extra}`, strategy, tailTokens: segments.suffix.length + extra }))
      : [{ name: strategy, strategy, tailTokens: undefined }],
  );
  const perRun = o.sets + 1;
  const approximateRuns = entries.filter((e) => approximateEntry(e.strategy)).length;
  const sentenceRuns = o.sentenceRuns ?? 0;
  if (!Number.isInteger(sentenceRuns) || sentenceRuns < 0) throw new EngineArgumentError(`sentenceRuns must be an integer ≥ 0, got ${sentenceRuns}`);
  const sentenceStrategies = sentenceRuns > 0 ? EXACT_STRATEGIES.filter((s) => o.strategies.includes(s)) : [];
  const total = perRun * entries.length + approximateRuns + 1 + 2 * sentenceRuns * sentenceStrategies.length;
  let done = 0;
  const tick = (label: string) => o.onProgress?.(++done, total, label);
  const ceiling = await measureDeviceCeiling(ctx);

  const full = Int32Array.from([...segments.prefix, ...segments.blocks.flatMap((b) => [...b]), ...segments.suffix]);
  let t0 = performance.now();
  const it = ctx.generate(full, { maxTokens: o.maxTokens });
  let step = await it.next();
  while (!step.done) step = await it.next();
  const single = { wall_ms: performance.now() - t0, tokens_evaluated: full.length + step.value.tokens.length };
  tick("single");

  const results = new Map<string, { strategy: BenchStrategy; tailTokens?: number; result: OcclusionResult; wall: number; screen?: ScreenResult; engine: EngineCost }>();
  for (const { name, strategy, tailTokens } of entries) {
    const before = ctx.schedulerStats();
    t0 = performance.now();
    if (strategy === "screen") {
      const screen = await ctx.screen({ segments, maxTokens: o.maxTokens, ...(o.screenTopK !== undefined ? { topK: o.screenTopK } : {}) });
      const wall = performance.now() - t0;
      for (let i = 0; i < perRun; i++) tick(name);
      results.set(name, { strategy, result: screen, wall, screen, engine: engineCost(before, ctx.schedulerStats(), wall, ceiling) });
      continue;
    }
    const result = await ctx.occlude({
      segments,
      strategy,
      maxTokens: o.maxTokens,
      ...(tailTokens !== undefined ? { tailTokens } : {}),
      onSequenceDone: () => tick(name),
    });
    const wall = performance.now() - t0;
    tick(`${name} A_full`);
    results.set(name, { strategy, ...(tailTokens !== undefined ? { tailTokens } : {}), result, wall, engine: engineCost(before, ctx.schedulerStats(), wall, ceiling) });
  }

  const reference = results.get("naive")?.result;
  const exactName = EXACT_STRATEGIES.find((n) => results.has(n));
  const seqs = (r: OcclusionResult) => [r.full, ...r.occluded];
  const strategies: Record<string, StrategyReport> = {};
  let maxMargin: number | null = null;
  for (const [name, { strategy, tailTokens, result, wall, screen, engine }] of results) {
    const approximate = approximateEntry(strategy);
    const cmp = reference !== undefined && strategy !== "naive" ? compareSequences(seqs(reference), seqs(result)) : undefined;
    const divergences = cmp?.divergences.map((d) => ({ seq: d.seq, step: d.step, naive_margin: d.referenceMargin }));
    // Approximate answers differ by design; only exact strategies speak to the near-tie claim.
    if (divergences !== undefined && !approximate) maxMargin = Math.max(maxMargin ?? 0, ...divergences.map((d) => d.naive_margin));
    const exact = exactName !== undefined ? { name: exactName, result: results.get(exactName)!.result } : undefined;
    const measured = { strategy: strategy as ApproximateStrategy | "screen", ...(tailTokens !== undefined ? { tailTokens } : {}), result };
    const fidelity = !approximate ? undefined : exact ? await measureFidelity(o.fidelityContext ?? ctx, segments, exact, measured) : null;
    if (approximate) tick(`${name} fidelity`);
    strategies[name] = {
      wall_ms: wall,
      tokens_evaluated: result.counters.tokensEvaluated,
      tokens_reused: result.counters.tokensReused,
      draft_accepted: result.counters.draftAccepted,
      decode_steps: result.counters.decodeSteps,
      sequences_identical: cmp?.identical ?? null,
      sequences_total: perRun,
      first_divergences: divergences ?? null,
      ...(approximate ? { approximate: true as const, ...(tailTokens !== undefined ? { tail_tokens: tailTokens } : {}), fidelity: fidelity ?? null } : {}),
      ...(screen ? { regenerated: screen.regenerated.length, screened: screen.screened.length } : {}),
      engine,
    };
  }
  let sentences: Record<string, SentenceCost> | undefined;
  for (const strategy of sentenceStrategies) {
    sentences ??= {};
    sentences[strategy] = await measureSentenceCost(ctx, segments, strategy, o.maxTokens, sentenceRuns, () => tick(`${strategy} ± sentences`));
  }
  return {
    model: model.info.path,
    model_parameters: model.info.nParams,
    n_sets: o.sets,
    prompt_tokens: segmentsLength(segments),
    max_tokens: o.maxTokens,
    single,
    strategies,
    max_divergence_margin: maxMargin,
    ...(sentences ? { sentences } : {}),
    sampling: ctx.info.sampling,
    sampling_why: ctx.info.samplingWhy,
    device_ceiling: ceiling,
  };
}
