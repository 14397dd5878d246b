import { status } from "@grpc/grpc-js";
import {
  Baseline,
  EngineStrategy,
  RetrievalMode,
  SelectionStrategy,
  type AskRequest,
  type AttributionMetric as ProtoMetric,
  type GenerationOptions,
  type SelectionParams,
} from "@attr-rag/contracts";
import type { AttributionMetric } from "@attr-rag/core";
import { isSubjectToken } from "@attr-rag/contracts";
import { ServiceError } from "@attr-rag/index";
import type { GatewayConfig, RetrievalModeName, StrategyName } from "../config/gatewayConfig.js";
import { buildPrompt } from "./buildPrompt.js";
import { metricFromProto, type SelectionMetric, type SelectionSettings } from "@attr-rag/selector";
import { resolveAttribution, resolveSentences, type ResolvedAttribution, type ResolvedSentences } from "./resolveAttribution.js";
import { screenOptionsProblem, strategyNameOf } from "@attr-rag/worker";

/** Selection parameters with every default applied: what the selector receives. */
export type ResolvedSelection = SelectionSettings;

export type EngineStrategyName = StrategyName | "kv-reuse" | "kv-mask";

export interface ResolvedGeneration {
  maxTokens: number;
  /** The server's default is always exact; the approximate ones run only when a request names them. */
  strategy: EngineStrategyName | "screen";
  recomputeGap?: number;
  recomputeTail?: number;
  /** Set exactly when the strategy is screen. */
  screen?: { threshold?: number; topK?: number; regenerate: EngineStrategyName };
}

/** An AskRequest with every default applied and every limit checked. */
export interface ResolvedAsk {
  question: string;
  k: number;
  mode: RetrievalModeName;
  rrfK?: number;
  docIds: string[];
  sources: string[];
  selection: ResolvedSelection;
  generation: ResolvedGeneration;
  baseline: "none" | "topk" | "rerank";
  baselineK: number;
  includeOccludedAnswers: boolean;
  attribution: ResolvedAttribution;
  /** Sentence-level attribution of A_full and of the final answer. */
  sentences: ResolvedSentences;
  requestId?: string;
}

const invalid = (message: string) => new ServiceError(status.INVALID_ARGUMENT, message);

export function resolveAsk(request: AskRequest, config: GatewayConfig): ResolvedAsk {
  const question = checkQuestion(request.question, config);
  const k = request.retrieval?.k ?? config.k;
  if (!Number.isInteger(k) || k < 1 || k > config.maxK) throw invalid(`retrieval.k must be 1..${config.maxK}, got ${k}`);
  const rrfK = request.retrieval?.rrfK;
  if (rrfK !== undefined && (rrfK < 1 || rrfK > 100_000)) throw invalid(`retrieval.rrf_k must be 1..100000, got ${rrfK}`);
  const baseline = baselineName(request.baseline?.baseline ?? Baseline.BASELINE_UNSPECIFIED);
  const baselineK = request.baseline?.k ?? k;
  if (baseline !== "none" && (baselineK < 1 || baselineK > config.maxK)) throw invalid(`baseline.k must be 1..${config.maxK}, got ${baselineK}`);
  const attribution = resolveAttribution(request.attribution);
  if (request.requestId !== undefined && (!isSubjectToken(request.requestId) || request.requestId.length > 128)) {
    throw invalid("request_id must be 1-128 characters without spaces, dots, '*' or '>'");
  }
  const filter = request.retrieval?.filter;
  return {
    question,
    k,
    mode: modeName(request.retrieval?.mode ?? RetrievalMode.RETRIEVAL_MODE_UNSPECIFIED, config),
    ...(rrfK !== undefined ? { rrfK } : {}),
    docIds: filter?.docIds ?? [],
    sources: filter?.sources ?? [],
    selection: resolveSelection(request.selection, config, attribution.method),
    generation: resolveGeneration(request.generation, config),
    attribution,
    sentences: resolveSentences(request.attribution),
    baseline,
    baselineK,
    includeOccludedAnswers: request.includeOccludedAnswers,
    ...(request.requestId !== undefined ? { requestId: request.requestId } : {}),
  };
}

export function checkQuestion(question: string, config: GatewayConfig): string {
  const q = question.trim();
  if (q === "") throw invalid("question is empty");
  if (q.length > config.maxQuestionChars) throw invalid(`question has ${q.length} characters; the limit is ${config.maxQuestionChars}`);
  buildPrompt(q, []); // refuses what the prompt layout cannot carry (its reserved marker) before any work
  return q;
}

/**
 * Selection with every default applied. A coalition method yields one column, LOG_LIKELIHOOD, so it votes
 * alone (min_votes 1 unless asked); text metrics need occluded answers, which only occlusion produces.
 */
export function resolveSelection(p: SelectionParams | undefined, config: GatewayConfig, method: ResolvedAttribution["method"] = "occlusion"): ResolvedSelection {
  if (p !== undefined && p.strategy !== SelectionStrategy.SELECTION_STRATEGY_UNSPECIFIED && p.strategy !== SelectionStrategy.SELECTION_STRATEGY_ELBOW) {
    throw invalid(`selection.strategy ${String(p.strategy)} is not a defined SelectionStrategy; use SELECTION_STRATEGY_ELBOW`);
  }
  const coalition = method !== "occlusion";
  const metrics: SelectionMetric[] = p && p.metrics.length > 0 ? [...new Set(p.metrics.map((m: ProtoMetric) => metricFromProto(m)))] : coalition ? ["loglik"] : [...config.metrics];
  if (coalition && metrics.some((m) => m !== "loglik")) {
    throw invalid(`selection.metrics: ${method} scores the log-likelihood utility only; use LOG_LIKELIHOOD (text metrics compare occluded answers: ATTRIBUTION_METHOD_OCCLUSION)`);
  }
  const tau = p?.tau ?? config.tau;
  const epsilon = p?.epsilon ?? config.epsilon;
  const minVotes = p?.minVotes ?? (coalition ? 1 : config.minVotes);
  const maxGap = p?.maxGap ?? config.maxGap;
  if (!Number.isFinite(tau) || tau < 0) throw invalid(`selection.tau must be ≥ 0, got ${tau}`);
  if (!Number.isFinite(epsilon) || epsilon < 0) throw invalid(`selection.epsilon must be ≥ 0, got ${epsilon}`);
  if (minVotes < 1) throw invalid(`selection.min_votes must be ≥ 1, got ${minVotes}`);
  if (maxGap > 1000) throw invalid(`selection.max_gap must be ≤ 1000, got ${maxGap}`);
  const maxSets = p?.maxSets ?? config.maxSets;
  if (maxSets !== undefined && maxSets < 1) throw invalid("selection.max_sets must be ≥ 1");
  const tokenBudget = p?.tokenBudget;
  if (tokenBudget !== undefined && tokenBudget < 1) throw invalid("selection.token_budget must be ≥ 1");
  // The sets' token counts come from the occlusion job; a coalition method never measures them, and a budget
  // over unknown sizes would silently keep everything.
  if (tokenBudget !== undefined && coalition) throw invalid(`selection.token_budget needs the sets' token counts, which only occlusion measures; use max_sets with ${method}`);
  return {
    metrics,
    tau,
    minVotes,
    epsilon,
    maxGap,
    ...(maxSets !== undefined ? { maxSets } : {}),
    ...(tokenBudget !== undefined ? { tokenBudget } : {}),
  };
}

export function resolveGeneration(g: GenerationOptions | undefined, config: GatewayConfig): ResolvedGeneration {
  const maxTokens = g?.maxTokens ?? config.maxTokens;
  if (maxTokens < 1 || maxTokens > config.maxMaxTokens) throw invalid(`generation.max_tokens must be 1..${config.maxMaxTokens}, got ${maxTokens}`);
  const strategy = strategyName(g?.strategy ?? EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED, config);
  const screen = strategy === "screen" ? resolveScreen(g?.screen, config) : undefined;
  if (!screen && g?.screen !== undefined) throw invalid(`generation.screen applies to the SCREEN strategy, not ${strategy}`);
  // The windows shape approximate caches: the strategy's own, or screening's (and an approximate regeneration).
  const approximate = strategy === "kv-reuse" || strategy === "kv-mask" || strategy === "screen";
  if (!approximate && (g?.recomputeGap !== undefined || g?.recomputeTail !== undefined)) {
    throw invalid(`generation.recompute_gap and recompute_tail apply to the approximate strategies (KV_REUSE, KV_MASK, SCREEN), not ${strategy}`);
  }
  if (g?.recomputeTail === 0) throw invalid("generation.recompute_tail must be ≥ 1 (the last prompt token starts the answer)");
  return {
    maxTokens,
    strategy,
    ...(g?.recomputeGap !== undefined ? { recomputeGap: g.recomputeGap } : {}),
    ...(g?.recomputeTail !== undefined ? { recomputeTail: g.recomputeTail } : {}),
    ...(screen ? { screen } : {}),
  };
}

function resolveScreen(s: GenerationOptions["screen"], config: GatewayConfig): NonNullable<ResolvedGeneration["screen"]> {
  const problem = screenOptionsProblem(s);
  if (problem) throw invalid(problem);
  // Unset: speculative, exact whatever the server's default strategy is (a documented choice, not the config's).
  const regenerate = s?.regenerate === undefined || s.regenerate === EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED ? "speculative" : strategyName(s.regenerate, config);
  return { ...(s?.threshold !== undefined ? { threshold: s.threshold } : {}), ...(s?.topK !== undefined ? { topK: s.topK } : {}), regenerate: regenerate as EngineStrategyName };
}

function strategyName(s: EngineStrategy, config: GatewayConfig): ResolvedGeneration["strategy"] {
  if (s === EngineStrategy.ENGINE_STRATEGY_UNSPECIFIED) return config.strategy;
  const name = strategyNameOf(s);
  if (name === undefined) throw invalid(`generation.strategy ${String(s)} is not a defined EngineStrategy`);
  return name;
}

function baselineName(b: Baseline): ResolvedAsk["baseline"] {
  switch (b) {
    case Baseline.BASELINE_UNSPECIFIED:
    case Baseline.BASELINE_NONE:
      return "none";
    case Baseline.BASELINE_TOPK:
      return "topk";
    case Baseline.BASELINE_RERANK:
      return "rerank";
    default:
      throw invalid(`unknown baseline ${String(b)}`);
  }
}

function modeName(m: RetrievalMode, config: GatewayConfig): RetrievalModeName {
  switch (m) {
    case RetrievalMode.RETRIEVAL_MODE_UNSPECIFIED:
      return config.retrievalMode;
    case RetrievalMode.RETRIEVAL_MODE_DENSE:
      return "dense";
    case RetrievalMode.RETRIEVAL_MODE_BM25:
      return "bm25";
    case RetrievalMode.RETRIEVAL_MODE_HYBRID:
      return "hybrid";
    default:
      throw invalid(`unknown retrieval mode ${String(m)}`);
  }
}
