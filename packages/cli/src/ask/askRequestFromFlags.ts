import {
  AskRequest,
  AttributionMethod,
  AttributionMetric,
  Baseline,
  EngineStrategy,
  RetrievalMode,
  type ScreenOptions,
} from "@attr-rag/contracts";
import { COALITION_METHODS } from "@attr-rag/core";
import { methodToProto } from "@attr-rag/selector";
import { JOB_STRATEGIES, strategyToProto } from "@attr-rag/worker";
import { CliError } from "../cliError.js";
import { nonNegativeInt, positiveInt } from "../parseArgs.js";

export interface AskFlags {
  k?: string;
  mode?: string;
  maxTokens?: string;
  strategy?: string;
  recomputeGap?: string;
  recomputeTail?: string;
  screenTopK?: string;
  screenThreshold?: string;
  screenRegenerate?: string;
  baseline?: string;
  metrics?: string;
  tau?: string;
  minVotes?: string;
  epsilon?: string;
  maxSets?: string;
  maxGap?: string;
  includeOccluded?: boolean;
  requestId?: string;
  method?: string;
  samples?: string;
  seed?: string;
  betaAlpha?: string;
  betaBeta?: string;
  /** Commander's --no-sentences: false when given. */
  sentences?: boolean;
  sentenceThreshold?: string;
}

const MODES: Record<string, RetrievalMode> = { dense: RetrievalMode.RETRIEVAL_MODE_DENSE, bm25: RetrievalMode.RETRIEVAL_MODE_BM25, hybrid: RetrievalMode.RETRIEVAL_MODE_HYBRID };
const STRATEGIES: Record<string, EngineStrategy> = Object.fromEntries(JOB_STRATEGIES.map((s) => [s, strategyToProto(s)]));
const { screen: _screen, ...REGENERATE } = STRATEGIES;
const METRICS: Record<string, AttributionMetric> = {
  cosine: AttributionMetric.ATTRIBUTION_METRIC_COSINE,
  jaccard: AttributionMetric.ATTRIBUTION_METRIC_JACCARD,
  rouge1: AttributionMetric.ATTRIBUTION_METRIC_ROUGE1,
  rouge2: AttributionMetric.ATTRIBUTION_METRIC_ROUGE2,
  rougeL: AttributionMetric.ATTRIBUTION_METRIC_ROUGE_L,
  rougeLsum: AttributionMetric.ATTRIBUTION_METRIC_ROUGE_LSUM,
  loglik: AttributionMetric.ATTRIBUTION_METRIC_LOG_LIKELIHOOD,
};
/** --method names: the paper's occlusion and the coalition methods on the log-likelihood utility. */
export const METHODS: Record<string, AttributionMethod> = Object.fromEntries((["occlusion", ...COALITION_METHODS] as const).map((m) => [m, methodToProto(m)]));

function screenFlags(f: AskFlags): { screen?: ScreenOptions } {
  if (f.screenTopK === undefined && f.screenThreshold === undefined && f.screenRegenerate === undefined) return {};
  if (f.strategy !== "screen") throw new CliError("--screen-top-k, --screen-threshold and --screen-regenerate apply to --strategy screen");
  if (f.screenTopK !== undefined && f.screenThreshold !== undefined) throw new CliError("give --screen-top-k or --screen-threshold, not both");
  const threshold = f.screenThreshold !== undefined ? Number(f.screenThreshold) : undefined;
  if (threshold !== undefined && (f.screenThreshold!.trim() === "" || !Number.isFinite(threshold))) throw new CliError(`--screen-threshold must be a number (nats), got "${f.screenThreshold}"`);
  return {
    screen: {
      ...(f.screenTopK !== undefined ? { topK: nonNegativeInt("--screen-top-k", f.screenTopK) } : {}),
      ...(threshold !== undefined ? { threshold } : {}),
      regenerate: f.screenRegenerate !== undefined ? pick(REGENERATE, "--screen-regenerate", f.screenRegenerate) : EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED,
    },
  };
}

function pick<T>(table: Record<string, T>, flag: string, value: string): T {
  const hit = table[value];
  if (hit === undefined) throw new CliError(`${flag} must be one of ${Object.keys(table).join(", ")}, got "${value}"`);
  return hit;
}

function positiveNumber(flag: string, value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0) throw new CliError(`${flag} must be a number > 0, got "${value}"`);
  return n;
}

function nonNegative(flag: string, value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0) throw new CliError(`${flag} must be a number ≥ 0, got "${value}"`);
  return n;
}

/** `topk:10` / `rerank:10` / `topk` / `none` → the request's baseline. */
export function parseBaseline(value: string): { baseline: Baseline; k?: number } {
  const m = /^(none|topk|rerank)(?::(\S+))?$/.exec(value.trim());
  if (m === null) throw new CliError(`--baseline must be none, topk[:K] or rerank[:K] (e.g. topk:10), got "${value}"`);
  const baseline = m[1] === "topk" ? Baseline.BASELINE_TOPK : m[1] === "rerank" ? Baseline.BASELINE_RERANK : Baseline.BASELINE_NONE;
  return { baseline, ...(m[2] !== undefined ? { k: positiveInt("--baseline K", m[2]) } : {}) };
}

/** The AskRequest `attr-rag ask` sends (embedded or remote): unset flags leave the server's defaults. */
export function askRequestFromFlags(question: string, f: AskFlags): AskRequest {
  if (question.trim() === "") throw new CliError("the question is empty");
  return AskRequest.fromPartial({
    question,
    retrieval: {
      ...(f.k !== undefined ? { k: positiveInt("--k", f.k) } : {}),
      mode: f.mode !== undefined ? pick(MODES, "--mode", f.mode) : RetrievalMode.RETRIEVAL_MODE_UNSPECIFIED,
    },
    generation: {
      ...(f.maxTokens !== undefined ? { maxTokens: positiveInt("--max-tokens", f.maxTokens) } : {}),
      strategy: f.strategy !== undefined ? pick(STRATEGIES, "--strategy", f.strategy) : EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED,
      ...(f.recomputeGap !== undefined ? { recomputeGap: nonNegativeInt("--recompute-gap", f.recomputeGap) } : {}),
      ...(f.recomputeTail !== undefined ? { recomputeTail: positiveInt("--recompute-tail", f.recomputeTail) } : {}),
      ...screenFlags(f),
    },
    selection: {
      metrics: f.metrics !== undefined ? f.metrics.split(",").map((m) => pick(METRICS, "--metrics", m.trim())) : [],
      ...(f.tau !== undefined ? { tau: nonNegative("--tau", f.tau) } : {}),
      ...(f.minVotes !== undefined ? { minVotes: positiveInt("--min-votes", f.minVotes) } : {}),
      ...(f.epsilon !== undefined ? { epsilon: nonNegative("--epsilon", f.epsilon) } : {}),
      ...(f.maxSets !== undefined ? { maxSets: positiveInt("--max-sets", f.maxSets) } : {}),
      ...(f.maxGap !== undefined ? { maxGap: Math.trunc(nonNegative("--max-gap", f.maxGap)) } : {}),
    },
    ...(f.baseline !== undefined ? { baseline: parseBaseline(f.baseline) } : {}),
    attribution: {
      method: f.method !== undefined ? pick(METHODS, "--method", f.method) : AttributionMethod.ATTRIBUTION_METHOD_UNSPECIFIED,
      ...(f.samples !== undefined ? { samples: positiveInt("--samples", f.samples) } : {}),
      ...(f.seed !== undefined ? { seed: Math.trunc(nonNegative("--seed", f.seed)) } : {}),
      ...(f.betaAlpha !== undefined ? { betaAlpha: positiveNumber("--beta-alpha", f.betaAlpha) } : {}),
      ...(f.betaBeta !== undefined ? { betaBeta: positiveNumber("--beta-beta", f.betaBeta) } : {}),
      ...(f.sentences === false ? { sentences: false } : {}),
      ...(f.sentenceThreshold !== undefined ? { sentenceThreshold: nonNegative("--sentence-threshold", f.sentenceThreshold) } : {}),
    },
    includeOccludedAnswers: f.includeOccluded ?? false,
    ...(f.requestId !== undefined ? { requestId: f.requestId } : {}),
  });
}
