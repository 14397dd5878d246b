import { buildPromptSegments } from "@attr-rag/core";
import { compareSequences } from "../divergence.js";
import type { EngineContext } from "../EngineContext.js";
import { EngineArgumentError } from "../errors.js";
import type { Model } from "../Model.js";
import { OCCLUSION_STRATEGIES, type OcclusionResult, type OcclusionStrategy } from "../occlude.js";
import { segmentsLength, type TokenSegments } from "../tokenSegments.js";

export interface OcclusionBenchOptions {
  sets: number;
  setTokens: number;
  maxTokens: number;
  strategies: readonly OcclusionStrategy[];
  /** Texts to cut context sets from (in order; consecutive windows of `setTokens` tokens). */
  corpus: readonly string[];
  question?: string;
  /** (done, total, label) after each finished answer. */
  onProgress?: (done: number, total: number, label: string) => void;
}

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
  /** Largest naive margin at any divergence (0 when every answer matched); null unless naive and another strategy ran together. */
  max_divergence_margin: number | null;
}

/** Context sets of about `setTokens` tokens each, cut from the corpus at token boundaries. */
export function benchSets(model: Model, corpus: readonly string[], sets: number, setTokens: number): string[] {
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
    if (!OCCLUSION_STRATEGIES.includes(s)) throw new EngineArgumentError(`unknown strategy "${s}"; use ${OCCLUSION_STRATEGIES.join(", ")}`);
  }
  const model = ctx.model;
  const question = o.question ?? "Explain all the steps of the experiments described above, in order.";
  const segments: TokenSegments = model.tokenizeSegments(
    buildPromptSegments({ question, sets: benchSets(model, o.corpus, o.sets, o.setTokens) }, model.chatTemplate()),
  );
  const perRun = o.sets + 1;
  const total = perRun * o.strategies.length + 1;
  let done = 0;
  const tick = (label: string) => o.onProgress?.(++done, total, label);

  const full = Int32Array.from([...segments.prefix, ...segments.blocks.flatMap((b) => [...b]), ...segments.suffix]);
  let t0 = performance.now();
  const it = ctx.generate(full, { maxTokens: o.maxTokens });
  let step = await it.next();
  while (!step.done) step = await it.next();
  const single = { wall_ms: performance.now() - t0, tokens_evaluated: full.length + step.value.tokens.length };
  tick("single");

  const results = new Map<OcclusionStrategy, { result: OcclusionResult; wall: number }>();
  for (const strategy of o.strategies) {
    t0 = performance.now();
    const result = await ctx.occlude({
      segments,
      strategy,
      maxTokens: o.maxTokens,
      onSequenceDone: () => tick(strategy),
    });
    const wall = performance.now() - t0;
    tick(`${strategy} A_full`);
    results.set(strategy, { result, wall });
  }

  const reference = results.get("naive")?.result;
  const seqs = (r: OcclusionResult) => [r.full, ...r.occluded];
  const strategies: Record<string, StrategyReport> = {};
  let maxMargin: number | null = null;
  for (const [strategy, { result, wall }] of results) {
    const cmp = reference !== undefined && strategy !== "naive" ? compareSequences(seqs(reference), seqs(result)) : undefined;
    const divergences = cmp?.divergences.map((d) => ({ seq: d.seq, step: d.step, naive_margin: d.referenceMargin }));
    if (divergences !== undefined) maxMargin = Math.max(maxMargin ?? 0, ...divergences.map((d) => d.naive_margin));
    strategies[strategy] = {
      wall_ms: wall,
      tokens_evaluated: result.counters.tokensEvaluated,
      tokens_reused: result.counters.tokensReused,
      draft_accepted: result.counters.draftAccepted,
      decode_steps: result.counters.decodeSteps,
      sequences_identical: cmp?.identical ?? null,
      sequences_total: perRun,
      first_divergences: divergences ?? null,
    };
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
  };
}
