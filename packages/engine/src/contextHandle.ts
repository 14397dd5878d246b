import type { PromptSegments } from "@attr-rag/core";
import type { ModelHandle } from "./modelHandle.js";
import type { NativeContextInfo, NativeContextOptions } from "./native/addonTypes.js";
import type { TokenSegments } from "./tokenSegments.js";

/**
 * What an operation (embed, generate, occlude, score, forced) needs of the context it runs on: its model,
 * settings and sizes. EngineContext, the façade that composes the operations, implements it; the operations
 * depend on this leaf, never on EngineContext.
 */
export interface ContextHandle {
  readonly model: ModelHandle;
  readonly options: Readonly<NativeContextOptions>;
  readonly info: Readonly<NativeContextInfo>;
  tokenize(segments: PromptSegments): TokenSegments;
}
