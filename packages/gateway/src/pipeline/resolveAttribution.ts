import { status } from "@grpc/grpc-js";
import { AttributionMethod, attributionMethodToJSON, type AttributionOptions } from "@attr-rag/contracts";
import { checkCoalitionOptions, DEFAULT_SENTENCE_THRESHOLD, type CoalitionMethod, type CoalitionOptions } from "@attr-rag/core";
import { ServiceError } from "@attr-rag/index";
import { COALITION_METHOD_OF } from "@attr-rag/selector";

/** The attribution method of a request with its parameters checked: occlusion, or a coalition method. */
export type ResolvedAttribution = { readonly method: "occlusion" } | ({ readonly method: CoalitionMethod } & CoalitionOptions);

/**
 * Checks attribution.method and its parameters before any work: samples 0 or above the limit, Beta
 * parameters ≤ 0 and an undefined method are INVALID_ARGUMENT naming the limit. The number of sets is only
 * known after retrieval, so exact Shapley's n ≤ 12 is checked again when attribution starts.
 */
export function resolveAttribution(o: AttributionOptions | undefined): ResolvedAttribution {
  const method = o?.method ?? AttributionMethod.ATTRIBUTION_METHOD_UNSPECIFIED;
  if (method === AttributionMethod.ATTRIBUTION_METHOD_UNSPECIFIED || method === AttributionMethod.ATTRIBUTION_METHOD_OCCLUSION) return { method: "occlusion" };
  const name = COALITION_METHOD_OF[method];
  if (name === undefined || attributionMethodToJSON(method) === "UNRECOGNIZED") {
    throw new ServiceError(status.INVALID_ARGUMENT, `attribution.method ${String(method)} is not a defined AttributionMethod`);
  }
  const options: CoalitionOptions = {
    method: name,
    ...(o?.samples !== undefined ? { samples: o.samples } : {}),
    ...(o?.seed !== undefined ? { seed: o.seed } : {}),
    ...(o?.betaAlpha !== undefined ? { betaAlpha: o.betaAlpha } : {}),
    ...(o?.betaBeta !== undefined ? { betaBeta: o.betaBeta } : {}),
  };
  checkCoalitionLimits(options, 1);
  return options;
}

/** checkCoalitionOptions as a gRPC status: the limit named in the message. */
export function checkCoalitionLimits(options: CoalitionOptions, nSets: number): void {
  try {
    checkCoalitionOptions(options, nSets);
  } catch (err) {
    throw new ServiceError(status.INVALID_ARGUMENT, `attribution: ${(err as Error).message}`);
  }
}

/** Sentence-level attribution as a request asks for it (on by default). */
export interface ResolvedSentences {
  readonly enabled: boolean;
  /** Nats: a set supports a sentence when leaving it out lowers the sentence's log-probability by more. */
  readonly threshold: number;
}

export function resolveSentences(o: AttributionOptions | undefined): ResolvedSentences {
  const threshold = o?.sentenceThreshold ?? DEFAULT_SENTENCE_THRESHOLD;
  if (!Number.isFinite(threshold) || threshold < 0 || threshold > 1000) {
    throw new ServiceError(status.INVALID_ARGUMENT, `attribution.sentence_threshold must be a number of nats in [0, 1000], got ${threshold}`);
  }
  return { enabled: o?.sentences ?? true, threshold };
}
