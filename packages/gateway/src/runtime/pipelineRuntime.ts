import type { Backends } from "../backends/Backends.js";
import type { GatewayConfig } from "../config/gatewayConfig.js";

/**
 * What the pipeline reads of a runtime: its settings and its backends. A Runtime is one; the batch runner
 * passes a view of the same runtime whose engine puts jobs in the batch lane (see lanes.ts).
 */
export interface PipelineRuntime {
  readonly config: GatewayConfig;
  readonly backends: Backends;
}
