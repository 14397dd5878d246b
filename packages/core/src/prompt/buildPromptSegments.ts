import type { PromptSegments } from "./promptSegments.js";

export interface ChatMessage {
  // "assistant" only in multi-turn chats (the eval judge's retry); Attr-RAG prompts are system + user.
  readonly role: "system" | "user" | "assistant";
  readonly content: string;
}

/** Applies a model's chat template to messages and returns the text to tokenize (generation prompt included). */
export type ChatTemplate = (messages: readonly ChatMessage[]) => string;

export interface PromptParts {
  readonly question: string;
  /** Chunk-set texts in re-rank order; set i is labelled `[i + 1]`. */
  readonly sets: readonly string[];
  readonly system?: string;
  readonly instruction?: string;
}

export const DEFAULT_SYSTEM_PROMPT =
  "You are a careful laboratory assistant. Answer only from the numbered context passages you are given.";

export const DEFAULT_INSTRUCTION =
  "Using only the context above, answer the question completely and step by step. " +
  "Cite the passages you use by their labels, like [2].";

/** Used when no model template is given: plain text with a trailing "Answer:" cue. */
export const plainChatTemplate: ChatTemplate = (messages) =>
  messages.map((m) => m.content).join("\n\n") + "\n\nAnswer:";

// Private-use code points: no tokenizer merges them with neighbours and documents practically never hold them;
// texts that do are refused (callers may strip it first).
export const RESERVED_CONTEXT_MARK = "\uE000attr-rag-context\uE001";

/** The label of set i (0-based) as the model and the citations see it. */
export function contextLabel(i: number): string {
  return `[${i + 1}]`;
}

/**
 * Lays out `[system][question][context sets, each labelled [i]][instruction]` through the chat template,
 * and cuts the result into segments around the context so occluded variants can share the prefix.
 * The template is applied once, to a message with a marker where the context goes, so whatever the
 * template wraps around the user turn lands in `prefix` and `suffix` exactly as in the full prompt.
 */
export function buildPromptSegments(parts: PromptParts, template: ChatTemplate = plainChatTemplate): PromptSegments {
  if (typeof parts.question !== "string" || parts.question.trim() === "") {
    throw new RangeError("buildPromptSegments: the question is empty");
  }
  for (const [what, text] of [["the question", parts.question], ["the system prompt", parts.system ?? ""], ["the instruction", parts.instruction ?? ""]] as const) {
    if (text.includes(RESERVED_CONTEXT_MARK)) throw new RangeError(`buildPromptSegments: ${what} contains a reserved marker`);
  }
  parts.sets.forEach((text, i) => {
    if (typeof text !== "string" || text.trim() === "") {
      throw new RangeError(`buildPromptSegments: context set ${contextLabel(i)} is empty; drop it before building the prompt`);
    }
    if (text.includes(RESERVED_CONTEXT_MARK)) throw new RangeError(`buildPromptSegments: context set ${contextLabel(i)} contains a reserved marker`);
  });
  const system = parts.system ?? DEFAULT_SYSTEM_PROMPT;
  const instruction = parts.instruction ?? DEFAULT_INSTRUCTION;
  const user = `Question: ${parts.question.trim()}\n\nContext:\n${RESERVED_CONTEXT_MARK}${instruction}`;
  const messages: ChatMessage[] = system === "" ? [{ role: "user", content: user }] : [
    { role: "system", content: system },
    { role: "user", content: user },
  ];
  const rendered = template(messages);
  const at = rendered.indexOf(RESERVED_CONTEXT_MARK);
  if (at < 0 || rendered.indexOf(RESERVED_CONTEXT_MARK, at + 1) >= 0) {
    throw new Error(
      "buildPromptSegments: the chat template changed the user message (the context marker is missing or repeated); " +
        "use a template that inserts message content verbatim",
    );
  }
  return {
    prefix: rendered.slice(0, at),
    blocks: parts.sets.map((text, i) => `${contextLabel(i)} ${text.trim()}\n\n`),
    suffix: rendered.slice(at + RESERVED_CONTEXT_MARK.length),
  };
}
