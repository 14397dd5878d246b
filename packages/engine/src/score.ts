import type { PromptSegments } from "@attr-rag/core";
import type { ContextHandle } from "./contextHandle.js";
import { EngineArgumentError, EngineLimitError } from "./errors.js";
import type { NativeContext, NativeScoreRequest } from "./native/addonTypes.js";
import { isTokenSegments } from "./occlude.js";
import type { TokenSegments } from "./tokenSegments.js";

export interface ScoreOptions {
  segments: PromptSegments | TokenSegments;
  /** The answer to score (A_full), as text or tokens. */
  continuation: string | Int32Array;
  /** Each coalition lists the block indices it keeps (any order). */
  coalitions: readonly (readonly number[])[];
  maxParallel?: number;
  signal?: AbortSignal;
}

export interface ScoreResult {
  /** v(C) = Σ log P(continuation tokens | question, C), per coalition. */
  totals: number[];
  /** Per coalition, per continuation token. */
  logProbs: Float32Array[];
  counters: { tokensEvaluated: number; tokensReused: number; decodeCalls: number; waves: number; totalMs: number };
}

export async function scoreContinuations(context: ContextHandle, native: NativeContext, o: ScoreOptions): Promise<ScoreResult> {
  const model = context.model;
  const s = isTokenSegments(o.segments) ? o.segments : context.tokenize(o.segments);
  const continuation = typeof o.continuation === "string" ? model.tokenize(o.continuation) : o.continuation;
  if (continuation.length === 0) throw new EngineArgumentError("the continuation to score is empty");
  if (s.suffix.length === 0) throw new EngineArgumentError("scoring needs a non-empty suffix (the instruction) before the continuation");
  if (o.coalitions.length === 0) throw new EngineArgumentError("give at least one coalition to score");
  model.checkTokens(continuation, "continuation");
  model.checkTokens(s.prefix, "prefix");
  model.checkTokens(s.suffix, "suffix");
  s.blocks.forEach((b, i) => {
    if (b.length === 0) throw new EngineArgumentError(`context set ${i} is empty`);
    model.checkTokens(b, `context set ${i}`);
  });
  const coalitions = o.coalitions.map((c, k) => {
    const sorted = [...new Set(c)].sort((a, b) => a - b);
    if (sorted.length !== c.length || sorted.some((j) => !Number.isInteger(j) || j < 0 || j >= s.blocks.length)) {
      throw new EngineArgumentError(`coalition ${k} must list distinct block indices in [0, ${s.blocks.length})`);
    }
    return Int32Array.from(sorted);
  });
  const maxParallel = o.maxParallel ?? 0;
  const request: NativeScoreRequest = { prefix: s.prefix, blocks: [...s.blocks], suffix: s.suffix, continuation, coalitions, maxParallel };
  const cells = native.cellsNeeded(request, 1);
  if (cells > context.info.sequenceCells) {
    throw new EngineLimitError(`scoring needs ${cells} KV cells but a sequence can use ${context.info.sequenceCells}; use a larger contextSize`);
  }
  if (context.options.sequences < 2 && coalitions.some((c) => c.length !== s.blocks.length)) {
    throw new EngineLimitError("scoring coalitions needs a context with sequences ≥ 2");
  }
  const raw = await native.score(request);
  return { totals: [...raw.totals], logProbs: raw.logProbs, counters: raw.counters };
}
