// A batch file: one JSON object per line, {"id", "question", …ask settings named like ask's flags in
// snake_case}. Every row is checked before anything is sent, so a bad row names its line and field and
// nothing is submitted.
import type { BatchItem } from "@attr-rag/contracts";
import { askRequestFromFlags, type AskFlags } from "../ask/askRequestFromFlags.js";
import { CliError } from "../cliError.js";
import { InputError, parseJsonLines } from "@attr-rag/core";

/** Row field → the ask flag it sets (the flag's name in snake_case, so rows read like the command line). */
export const ROW_FIELDS: Readonly<Record<string, keyof AskFlags>> = {
  k: "k",
  mode: "mode",
  max_tokens: "maxTokens",
  strategy: "strategy",
  recompute_gap: "recomputeGap",
  recompute_tail: "recomputeTail",
  screen_top_k: "screenTopK",
  screen_threshold: "screenThreshold",
  screen_regenerate: "screenRegenerate",
  baseline: "baseline",
  metrics: "metrics",
  tau: "tau",
  min_votes: "minVotes",
  epsilon: "epsilon",
  max_sets: "maxSets",
  max_gap: "maxGap",
  include_occluded: "includeOccluded",
  method: "method",
  samples: "samples",
  seed: "seed",
  beta_alpha: "betaAlpha",
  beta_beta: "betaBeta",
  sentences: "sentences",
  sentence_threshold: "sentenceThreshold",
  request_id: "requestId",
};

const FLAG_OF: Record<string, string> = Object.fromEntries(Object.entries(ROW_FIELDS).map(([field, key]) => [`--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`, field]));

/** The ask flags a batch command was given: the defaults of every row. */
export function defaultsFromFlags(o: Record<string, unknown>): AskFlags {
  const out: Record<string, unknown> = {};
  for (const key of Object.values(ROW_FIELDS)) if (o[key] !== undefined) out[key] = o[key];
  return out as AskFlags;
}

/** Parses and checks every row of `text` (a file's contents) into batch items, in file order. */
export function batchItemsFromJsonl(text: string, file: string, defaults: AskFlags): BatchItem[] {
  let lines;
  try {
    lines = parseJsonLines(text);
  } catch (err) {
    throw new CliError(`${file}:${(err as Error).message.replace(/^line (\d+): /, "$1: ")}; nothing was submitted`, 2, { cause: err });
  }
  if (lines.length === 0) throw new CliError(`${file} has no rows; a batch needs at least one {"id": …, "question": …} line`);
  const seen = new Map<string, number>();
  return lines.map(({ line, value }) => {
    const at = `${file}:${line}`;
    const fail = (message: string) => new CliError(`${at}: ${message}; nothing was submitted`);
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw fail(`expected a JSON object, got ${Array.isArray(value) ? "an array" : JSON.stringify(value)}`);
    const row = openaiLine(value as Record<string, unknown>, fail);
    const flags: Record<string, unknown> = { ...defaults };
    for (const [field, v] of Object.entries(row)) {
      if (field === "id" || field === "question") continue;
      const key = ROW_FIELDS[field];
      if (key === undefined) throw fail(`unknown field "${field}"; rows take id, question and ${Object.keys(ROW_FIELDS).join(", ")}`);
      flags[key] = flagValue(field, v, fail);
    }
    if (typeof row.id !== "string" || row.id === "") throw fail(`field "id" must be a non-empty string, got ${row.id === undefined ? "nothing" : JSON.stringify(row.id)}`);
    const earlier = seen.get(row.id);
    if (earlier !== undefined) throw fail(`field "id": ${JSON.stringify(row.id)} is already the id of line ${earlier}`);
    seen.set(row.id, line);
    if (typeof row.question !== "string") throw fail(`field "question" must be a string, got ${row.question === undefined ? "nothing" : JSON.stringify(row.question)}`);
    try {
      return { itemId: row.id, request: askRequestFromFlags(row.question, flags as AskFlags) };
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      throw fail(rowMessage(err.message));
    }
  });
}

/** The endpoint an OpenAI-shaped batch line must name (our Ask; the shape is the OpenAI Batch input file's). */
export const OPENAI_BATCH_URL = "/v1/ask";

/**
 * A line in the OpenAI Batch input shape, {"custom_id", "method": "POST", "url": "/v1/ask", "body": {question,
 * …row fields}}, as our row (custom_id is the item id); any other line as it is.
 */
function openaiLine(line: Record<string, unknown>, fail: (m: string) => CliError): Record<string, unknown> {
  // "method" alone is our rows' attribution method: the OpenAI shape is told by its other fields.
  if (!("custom_id" in line) && !("body" in line) && !("url" in line)) return line;
  for (const field of Object.keys(line)) {
    if (!["custom_id", "method", "url", "body"].includes(field)) throw fail(`unknown field "${field}" in an OpenAI-shaped line; it takes custom_id, method, url and body`);
  }
  if (line.method !== "POST") throw fail(`field "method" must be "POST" (OpenAI Batch shape), got ${line.method === undefined ? "nothing" : JSON.stringify(line.method)}`);
  if (line.url !== OPENAI_BATCH_URL) throw fail(`field "url" must be "${OPENAI_BATCH_URL}" (the only endpoint a batch runs), got ${line.url === undefined ? "nothing" : JSON.stringify(line.url)}`);
  if (typeof line.custom_id !== "string" || line.custom_id === "") throw fail(`field "custom_id" must be a non-empty string, got ${line.custom_id === undefined ? "nothing" : JSON.stringify(line.custom_id)}`);
  const body = line.body;
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw fail(`field "body" must be an object with the question and ask fields, got ${JSON.stringify(body)}`);
  if ("id" in body) throw fail(`field "body" has "id": an OpenAI-shaped line names its item with custom_id`);
  return { ...(body as Record<string, unknown>), id: line.custom_id };
}

/** A row value as the flag parser takes it (strings, as typed on a command line; include_occluded and sentences booleans). */
function flagValue(field: string, v: unknown, fail: (m: string) => CliError): unknown {
  if (field === "include_occluded" || field === "sentences") {
    if (typeof v !== "boolean") throw fail(`field "${field}" must be true or false, got ${JSON.stringify(v)}`);
    return v;
  }
  if (field === "metrics" && Array.isArray(v) && v.every((m) => typeof m === "string")) return v.join(",");
  if (typeof v === "number" || typeof v === "string") return String(v);
  throw fail(`field "${field}" must be a number or a string, got ${JSON.stringify(v)}`);
}

/** The flag parser's message in the row's words: `--max-tokens must …` → `field "max_tokens": must …`. */
function rowMessage(message: string): string {
  const m = /^(--[a-z-]+)(?: K)? (.*)$/s.exec(message);
  if (m !== null && FLAG_OF[m[1]!] !== undefined) return `field "${FLAG_OF[m[1]!]}": ${m[2]}`;
  if (/^the question is empty/.test(message)) return `field "question": is empty`;
  return message;
}
