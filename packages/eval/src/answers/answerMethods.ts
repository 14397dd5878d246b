// Table I's columns: vanilla top-k RAG, cross-encoder re-ranked top-k, and Attr-RAG, each one AskRequest
// through the same pipeline (the baselines are the pipeline's own `baseline` field).
import { AskRequest, Baseline } from "@attr-rag/contracts";
import { InputError, positiveInt } from "@attr-rag/core";

export const DEFAULT_ANSWER_METHODS = "topk:10,topk:20,topk:30,rerank:10,rerank:20,rerank:30,attr-rag";

export interface AnswerMethod {
  /** As given and as written in rows.jsonl: `topk:10`, `rerank:20`, `attr-rag`. */
  readonly name: string;
  readonly kind: "topk" | "rerank" | "attr-rag";
  readonly k?: number;
}

/** `--methods topk:10,rerank:30,attr-rag` → the methods, in the order given; duplicates are refused. */
export function parseAnswerMethods(value: string): AnswerMethod[] {
  const names = value.split(",").map((s) => s.trim());
  if (names.some((n) => n === "")) throw new InputError(`--methods must be a comma-separated list such as ${DEFAULT_ANSWER_METHODS}, got "${value}"`, 2);
  const methods = names.map((name): AnswerMethod => {
    if (name === "attr-rag") return { name, kind: "attr-rag" };
    const m = /^(topk|rerank):(\d+)$/.exec(name);
    if (m === null) throw new InputError(`--methods: "${name}" is not a method; use topk:K, rerank:K or attr-rag (e.g. ${DEFAULT_ANSWER_METHODS})`, 2);
    return { name, kind: m[1] as "topk" | "rerank", k: positiveInt("--baseline K", m[2]!) };
  });
  const dup = methods.find((m, i) => methods.findIndex((n) => n.name === m.name) !== i);
  if (dup) throw new InputError(`--methods: "${dup.name}" is listed twice`, 2);
  return methods;
}

/**
 * The Ask for one method. What every method shares (the question, retrieval mode, max tokens, selection,
 * attribution) comes from `base`; `topk:K` retrieves exactly K, `rerank:K` re-ranks the usual pool (retrieval
 * k, at least K) and keeps K, `attr-rag` is the full pipeline.
 */
export function requestFor(method: AnswerMethod, base: AskRequest): AskRequest {
  if (method.kind === "attr-rag") return base;
  const baseline = method.kind === "topk" ? Baseline.BASELINE_TOPK : Baseline.BASELINE_RERANK;
  return AskRequest.fromPartial({
    ...base,
    retrieval: { ...base.retrieval, ...(method.kind === "topk" ? { k: method.k } : {}) },
    baseline: { baseline, k: method.k! },
  });
}
