import { status } from "@grpc/grpc-js";
import type { AttributeRequest, AttributeResponse } from "@attr-rag/contracts";
import { ServiceError } from "@attr-rag/index";
import type { Runtime } from "../runtime/Runtime.js";
import { attributeSets, type SetText } from "./attributeSets.js";
import { checkQuestion, resolveAsk, resolveGeneration, resolveSelection } from "./resolveAsk.js";

const invalid = (message: string) => new ServiceError(status.INVALID_ARGUMENT, message);

/** Attribute: steps 4-7 on caller-supplied context sets (no retrieval, re-ranking or gap fill). */
export async function runAttribute(runtime: Runtime, request: AttributeRequest, signal: AbortSignal): Promise<AttributeResponse> {
  const { config } = runtime;
  const question = checkQuestion(request.question, config);
  // The same checks as Ask for the shared options (method, metrics, limits).
  resolveAsk({ question, includeOccludedAnswers: false, ...(request.attribution ? { attribution: request.attribution } : {}) }, config);
  if (request.sets.length === 0) throw invalid("sets is empty: give at least one context set to attribute");
  if (request.sets.length > config.maxAttributeSets) throw invalid(`${request.sets.length} sets; the limit is ${config.maxAttributeSets}`);
  const seen = new Set<string>();
  const sets: SetText[] = request.sets.map((s, i) => {
    if (s.text.trim() === "") throw invalid(`sets[${i}] has empty text`);
    const id = s.setId ?? `set-${i + 1}`;
    if (id === "" || seen.has(id)) throw invalid(`sets[${i}] has ${id === "" ? "an empty" : "a duplicate"} set_id "${id}"`);
    seen.add(id);
    return { id, text: s.text };
  });
  if (request.initialAnswer !== undefined && request.initialAnswer.trim() === "") throw invalid("initial_answer is set but empty");
  const started = performance.now();
  const result = await attributeSets(
    runtime,
    {
      question,
      sets,
      generation: resolveGeneration(request.generation, config),
      selection: resolveSelection(request.selection, config),
      includeOccludedAnswers: request.includeOccludedAnswers,
      dropSetsThatDoNotFit: false,
      ...(request.initialAnswer !== undefined ? { initialAnswer: request.initialAnswer } : {}),
    },
    {},
    signal,
  );
  return {
    initialAnswer: result.initialAnswer,
    occluded: result.outcomes,
    attribution: result.table,
    selection: result.selection,
    counters: result.counters,
    timings: { ...result.timings, totalMs: performance.now() - started },
  };
}
