// Public API of @attr-rag/gateway: the Attr-RAG pipeline (one code path for the gRPC service and the CLI)
// and its gRPC server. Siblings import only from here.
export { ConfigError } from "./config/ConfigError.js";
export {
  batchConcurrencyOf,
  DEFAULT_CONFIG,
  DISTRIBUTED_MAX_CONCURRENT_ASKS,
  type GatewayConfig,
  type RetrievalModeName,
  type StrategyName,
} from "./config/gatewayConfig.js";
export { CONFIG_KEYS, envName, flagName, loadConfig, type ConfigSources } from "./config/loadConfig.js";
export { Runtime, type Reranker } from "./runtime/Runtime.js";
export type { PipelineRuntime } from "./runtime/pipelineRuntime.js";
export { pipelineBatchRunner } from "./runtime/pipelineBatchRunner.js";
export { runAsk } from "./pipeline/runAsk.js";
export { runAttribute } from "./pipeline/runAttribute.js";
export type { AskEventListener } from "./pipeline/eventSink.js";
export { FALLBACK_RERANKER } from "./pipeline/rerank.js";
export { MIN_CITATION_SIMILARITY } from "./pipeline/citations.js";
export { answerSentences } from "@attr-rag/core";
export { startGatewayServer, type GatewayServerHandle, type StartGatewayServerOptions } from "./server/startGatewayServer.js";
export { Admission } from "./server/admission.js";
export { StoppedCalls, type StoppedCall } from "./server/stoppedCalls.js";
export { renderReport, type ReportInput } from "./report/renderReport.js";
export { escapeHtml } from "./report/escapeHtml.js";
export { REPORT_CSS } from "./report/styles.js";
export { gatewayClient, remoteAsk, type RemoteOptions } from "./client/remoteAsk.js";
export { RemoteBatches, type BatchServerOptions } from "./client/RemoteBatches.js";
export { remoteError, USAGE_CODES } from "./client/remoteError.js";
