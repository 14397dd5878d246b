import { status } from "@grpc/grpc-js";
import { buildPromptSegments, type ChatTemplate, type PromptSegments } from "@attr-rag/core";
import { ServiceError } from "@attr-rag/index";

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
