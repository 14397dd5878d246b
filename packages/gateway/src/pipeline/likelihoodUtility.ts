import type { EngineCounters, PromptSegment } from "@attr-rag/contracts";
import type { Coalition, Utility } from "@attr-rag/core";
import { addCounters } from "@attr-rag/worker";
import type { PipelineRuntime } from "../runtime/pipelineRuntime.js";
import { engineCall, newJobId } from "./engineCalls.js";
import type { SetText } from "./attributeSetsTypes.js";

export interface LikelihoodUtility {
  readonly utility: Utility;
  /** Engine work of every job so far. */
  counters(): EngineCounters | undefined;
  /** Milliseconds spent waiting for the engine. */
  readonly ms: () => number;
}

/**
 * v(C) = Σ_t log P(A_full[t] | question, C, A_full[<t]) as the coalition methods ask for it: each batch is one
 * likelihood job (the engine scores it in trie-ordered shared passes), run wherever the engine runs.
 */
export function likelihoodUtility(runtime: PipelineRuntime, requestId: string, question: string, sets: readonly SetText[], target: PromptSegment, signal: AbortSignal): LikelihoodUtility {
  let counters: EngineCounters | undefined;
  let ms = 0;
  const utility = async (coalitions: readonly Coalition[]) => {
    const started = performance.now();
    const result = await engineCall(() =>
      runtime.backends.engine.likelihood(
        {
          jobId: newJobId("lik"),
          requestId,
          model: runtime.backends.modelId,
          context: { question, sets: sets.map((s) => ({ setId: s.id, segment: { content: { $case: "text", value: s.text } } })) },
          target,
          coalitions: coalitions.map((c) => ({ setIndices: [...c] })),
          deadlineUnixMs: 0,
          perToken: false,
        },
        signal,
      ),
    );
    ms += performance.now() - started;
    counters = counters === undefined ? result.counters! : addCounters(counters, result.counters!);
    return result.logLikelihoods;
  };
  return { utility, counters: () => counters, ms: () => ms };
}
