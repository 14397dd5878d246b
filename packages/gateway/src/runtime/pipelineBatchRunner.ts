import { BatchRunner, type BatchRunnerOptions } from "@attr-rag/batch";
import { runAsk } from "../pipeline/runAsk.js";
import { toStatus } from "../server/toStatus.js";
import type { Runtime } from "./Runtime.js";

/**
 * A batch runner whose items go through this runtime's pipeline, in the batch lane of its engine: the one
 * place batches meet the pipeline, for the gateway's server and for `attr-rag batch run` alike.
 */
export function pipelineBatchRunner(runtime: Runtime, o: Omit<BatchRunnerOptions, "runItem" | "statusOf">): BatchRunner {
  return new BatchRunner({ ...o, runItem: (request, onEvent, signal) => runAsk(runtime.batchPipeline, request, onEvent, signal), statusOf: toStatus });
}
