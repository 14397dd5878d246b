import { status } from "@grpc/grpc-js";
import type { AttributeRequest, AttributeResponse } from "@attr-rag/contracts";
import { ServiceError } from "@attr-rag/index";
import type { GatewayConfig } from "../config/gatewayConfig.js";
import type { PipelineRuntime } from "../runtime/pipelineRuntime.js";
import { attributeSets, type AttributeSetsInput, type SetText } from "./attributeSets.js";
import { buildPrompt } from "./buildPrompt.js";
import { observeAskTimings } from "../metrics/askMetrics.js";
import { checkQuestion, resolveGeneration, resolveSelection } from "./resolveAsk.js";
import { checkCoalitionLimits, resolveAttribution, resolveSentences } from "./resolveAttribution.js";

const invalid = (message: string) => new ServiceError(status.INVALID_ARGUMENT, message);

/** Checks an Attribute request against the limits and applies the defaults; cheap, so it runs before admission. */
export function prepareAttribute(request: AttributeRequest, config: GatewayConfig): AttributeSetsInput {
  const question = checkQuestion(request.question, config);
  const attribution = resolveAttribution(request.attribution);
  if (request.sets.length === 0) throw invalid("sets is empty: give at least one context set to attribute");
  if (request.sets.length > config.maxAttributeSets) throw invalid(`${request.sets.length} sets; the limit is ${config.maxAttributeSets}`);
  const chars = request.sets.reduce((n, s) => n + s.text.length, 0) + (request.initialAnswer?.length ?? 0);
  if (chars > config.maxAttributeChars) {
    throw invalid(`the sets and initial answer hold ${chars} characters; the limit is ${config.maxAttributeChars}`);
  }
  if (attribution.method !== "occlusion") checkCoalitionLimits(attribution, request.sets.length);
  const seen = new Set<string>();
  const sets: SetText[] = request.sets.map((s, i) => {
    if (s.text.trim() === "") throw invalid(`sets[${i}] has empty text`);
    // The proto's default id: the set's 0-based index in decimal.
    const id = s.setId ?? String(i);
    if (id === "" || seen.has(id)) throw invalid(`sets[${i}] has ${id === "" ? "an empty" : "a duplicate"} set_id "${id}"`);
    seen.add(id);
    return { id, text: s.text };
  });
  if (request.initialAnswer !== undefined && request.initialAnswer.trim() === "") throw invalid("initial_answer is set but empty");
  buildPrompt(question, sets.map((s) => s.text)); // refuses texts the prompt layout cannot carry, before admission
  return {
    question,
    sets,
    generation: resolveGeneration(request.generation, config),
    selection: resolveSelection(request.selection, config, attribution.method),
    attribution,
    sentences: resolveSentences(request.attribution),
    includeOccludedAnswers: request.includeOccludedAnswers,
    // The caller chose these sets: refusing is better than attributing a subset of them.
    dropSetsThatDoNotFit: false,
    ...(request.initialAnswer !== undefined ? { initialAnswer: request.initialAnswer } : {}),
  };
}

/** Attribute: steps 4-7 on caller-supplied context sets (no retrieval, re-ranking or gap fill). */
export async function runAttribute(runtime: PipelineRuntime, request: AttributeRequest | AttributeSetsInput, signal: AbortSignal): Promise<AttributeResponse> {
  const input = "dropSetsThatDoNotFit" in request ? request : prepareAttribute(request, runtime.config);
  const started = performance.now();
  const result = await attributeSets(runtime, input, {}, signal);
  const timings = { ...result.timings, totalMs: performance.now() - started };
  observeAskTimings("Attribute", "none", timings);
  return {
    initialAnswer: result.initialAnswer,
    occluded: result.outcomes,
    attribution: result.table,
    selection: result.selection,
    counters: result.counters,
    timings,
  };
}
