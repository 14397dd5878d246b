import { status } from "@grpc/grpc-js";
import { buildPromptSegments, RESERVED_CONTEXT_MARK, type ChatTemplate, type PromptSegments } from "@attr-rag/core";
import { ServiceError } from "@attr-rag/index";

/**
 * Stored document text the prompt layout cannot carry as is (the core's reserved context marker) is
 * removed: one odd document must not fail every question that retrieves it.
 */
export function promptSafe(text: string): string {
  return text.replaceAll(RESERVED_CONTEXT_MARK, "");
}

/**
 * The SPEC prompt layout for a question and context texts. The core refuses empty texts and texts holding
 * its reserved context marker with a RangeError; here that is the caller's input, so INVALID_ARGUMENT.
 */
export function buildPrompt(question: string, texts: readonly string[], template?: ChatTemplate): PromptSegments {
  try {
    return buildPromptSegments({ question, sets: texts }, template);
  } catch (err) {
    if (err instanceof RangeError) throw new ServiceError(status.INVALID_ARGUMENT, err.message.replace(/^buildPromptSegments: /, ""), { cause: err });
    throw err;
  }
}
