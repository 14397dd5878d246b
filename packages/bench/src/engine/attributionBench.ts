import type { EngineContext, TokenSegments } from "@attr-rag/engine";
import { attributeCoalitions, type Coalition } from "@attr-rag/core";
import { benchPromptSegments } from "./occlusionBench.js";

export interface AttributionBenchOptions {
  sets: number;
  setTokens: number;
  /** Kernel SHAP's coalition budget. */
  samples: number;
  maxTokens: number;
  seed?: number;
  corpus: readonly string[];
  onProgress?: (done: number, total: number, label: string) => void;
}

interface Run {
  wall_ms: number;
  tokens_evaluated: number;
  /** Rows of the vocabulary projection: one per scored answer token. */
  output_rows: number;
}

export interface AttributionBenchReport {
  model: string;
  n_sets: number;
  samples: number;
  /** Distinct coalitions Kernel SHAP asked for (∅ and N included). */
  coalitions: number;
  prompt_tokens: number;
  answer_tokens: number;
  batched: Run & { tokens_reused: number };
  one_by_one: Run;
  speedup: number;
  /** Largest |v_batched(C) − v_alone(C)| over the coalitions, in nats. */
  max_abs_diff: number;
  /**
   * One-by-one over batched multiply-adds at equal per-token efficiency: tokens × transformer body plus
   * output rows × vocabulary projection (n_vocab × n_embd), attention left out.
   */
  multiply_add_bound: number;
}

/**
 * Kernel SHAP's coalitions for one prompt, scored two ways: in trie-ordered shared batches (what Attribute
 * runs) and one coalition at a time, each as its own prompt of just its sets.
 */
export async function runAttributionBench(ctx: EngineContext, o: AttributionBenchOptions): Promise<AttributionBenchReport> {
  const model = ctx.model;
  const segments = benchPromptSegments(model, o.corpus, o.sets, o.setTokens);
  const full = Int32Array.from([...segments.prefix, ...segments.blocks.flatMap((b) => [...b]), ...segments.suffix]);
  const it = ctx.generate(full, { maxTokens: o.maxTokens });
  let step = await it.next();
  while (!step.done) step = await it.next();
  const answer = Int32Array.from(step.value.tokens);
  if (answer.length === 0) throw new Error("the model's answer is empty; nothing to score");

  const asked: Coalition[] = [];
  const batchedTotals: number[] = [];
  const batched = { wall_ms: 0, tokens_evaluated: 0, tokens_reused: 0, output_rows: 0 };
  await attributeCoalitions(
    o.sets,
    async (coalitions) => {
      const t0 = performance.now();
      const r = await ctx.scoreContinuations({ segments, continuation: answer, coalitions });
      batched.wall_ms += performance.now() - t0;
      batched.tokens_evaluated += r.counters.tokensEvaluated;
      batched.tokens_reused += r.counters.tokensReused;
      // The all-sets prompt is scored first in every batch (others copy from it).
      batched.output_rows += answer.length * (coalitions.length + (coalitions.some((c) => c.length === o.sets) ? 0 : 1));
      asked.push(...coalitions);
      batchedTotals.push(...r.totals);
      o.onProgress?.(asked.length, asked.length, "batched");
      return r.totals;
    },
    { method: "kernel-shap", samples: o.samples, seed: o.seed ?? 0 },
  );

  const oneByOne = { wall_ms: 0, tokens_evaluated: 0, output_rows: 0 };
  let maxAbsDiff = 0;
  for (const [k, c] of asked.entries()) {
    const alone: TokenSegments = { prefix: segments.prefix, blocks: c.map((j) => segments.blocks[j]!), suffix: segments.suffix };
    const t0 = performance.now();
    const r = await ctx.scoreContinuations({ segments: alone, continuation: answer, coalitions: [c.map((_, i) => i)] });
    oneByOne.wall_ms += performance.now() - t0;
    oneByOne.tokens_evaluated += r.counters.tokensEvaluated;
    oneByOne.output_rows += answer.length;
    maxAbsDiff = Math.max(maxAbsDiff, Math.abs(r.totals[0]! - batchedTotals[k]!));
    o.onProgress?.(k + 1, asked.length, "one by one");
  }

  const row = model.info.nVocab * model.info.nEmbd;
  // Tied embeddings (the synthetic presets, stories260K): the one V × E matrix is the lookup and the projection.
  const body = Math.max(1, model.info.nParams - row);
  const macs = (r: Run) => r.tokens_evaluated * body + r.output_rows * row;
  return {
    model: model.info.path,
    n_sets: o.sets,
    samples: o.samples,
    coalitions: asked.length,
    prompt_tokens: full.length,
    answer_tokens: answer.length,
    batched,
    one_by_one: oneByOne,
    speedup: oneByOne.wall_ms / batched.wall_ms,
    max_abs_diff: maxAbsDiff,
    multiply_add_bound: macs(oneByOne) / macs(batched),
  };
}
