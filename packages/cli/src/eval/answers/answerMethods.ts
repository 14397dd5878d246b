// Table I's columns: vanilla top-k RAG, cross-encoder re-ranked top-k, and Attr-RAG, each one AskRequest
// through the same pipeline (the baselines are the pipeline's own `baseline` field).
import { AskRequest } from "@attr-rag/contracts";
import { askRequestFromFlags, parseBaseline, type AskFlags } from "../../ask/askRequestFromFlags.js";
import { CliError } from "../../cliError.js";

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
  if (names.some((n) => n === "")) throw new CliError(`--methods must be a comma-separated list such as ${DEFAULT_ANSWER_METHODS}, got "${value}"`, 2);
  const methods = names.map((name): AnswerMethod => {
    if (name === "attr-rag") return { name, kind: "attr-rag" };
    const m = /^(topk|rerank):(\d+)$/.exec(name);
    if (m === null) throw new CliError(`--methods: "${name}" is not a method; use topk:K, rerank:K or attr-rag (e.g. ${DEFAULT_ANSWER_METHODS})`, 2);
    const { k } = parseBaseline(name);
    return { name, kind: m[1] as "topk" | "rerank", k: k! };
  });
  const dup = methods.find((m, i) => methods.findIndex((n) => n.name === m.name) !== i);
  if (dup) throw new CliError(`--methods: "${dup.name}" is listed twice`, 2);
  return methods;
}

/**
 * The Ask for one method. Flags shared by every method (retrieval mode, max tokens, selection, attribution)
 * come from `flags`; `topk:K` retrieves exactly K, `rerank:K` re-ranks the usual pool (retrieval k, at least K)
 * and keeps K, `attr-rag` is the full pipeline.
 */
export function requestFor(method: AnswerMethod, question: string, flags: AskFlags, requestId: string): AskRequest {
  const base = askRequestFromFlags(question, { ...flags, requestId });
  if (method.kind === "attr-rag") return base;
  const { baseline } = parseBaseline(method.name);
  return AskRequest.fromPartial({
    ...base,
    retrieval: { ...base.retrieval, ...(method.kind === "topk" ? { k: method.k } : {}) },
    baseline: { baseline, k: method.k! },
  });
}
