// Public API of @attr-rag/bench: every benchmark of Attr-RAG (the engine's occlusion and attribution
// workloads, Ask throughput and telemetry cost, the local cluster, batches, the sharded index, the peers),
// the run record each report carries, and (in render/, scripts/) the JSON→docs renderer and the
// stand-alone benchmark scripts. `attr-rag bench …` commands are thin wrappers over these.
export { describeRun, type BenchRun } from "./record/runRecord.js";
export { readBenchCorpus } from "./engine/benchCorpus.js";
export { runAttributionBench, type AttributionBenchOptions, type AttributionBenchReport } from "./engine/attributionBench.js";
export { occlusionBenchText } from "./engine/occlusionText.js";
export { BENCH_STRATEGIES, runOcclusionBench, type BenchStrategy, type OcclusionBenchReport } from "./engine/occlusionBench.js";
export { runClusterBench, type ClusterBenchOptions, type ClusterBenchReport } from "./cluster/clusterBench.js";
export { runBatchBench, type BatchBenchOptions, type BatchBenchReport } from "./cluster/batchBench.js";
export { runShardBench, type ShardBenchOptions } from "./cluster/shardBench.js";
export { cpuBetween, cpuSeconds } from "./cluster/processCpu.js";
export { runThroughputBench, type EngineVariant, type ThroughputBenchOptions, type ThroughputBenchReport } from "./throughput/throughputBench.js";
export { throughputText } from "./throughput/throughputText.js";
export { runTelemetryBench, type TelemetryBenchOptions, type TelemetryBenchReport } from "./throughput/telemetryBench.js";
export { OUR_SYSTEMS, PEER_SYSTEMS, type PeerGpu } from "./peers/peerTypes.js";
export type { ModelShape, SystemReport } from "./peers/peerReport.js";
export { PEER_LOCATIONS, peersText, runPeersBench, type PeersBenchOptions, type PeersBenchReport } from "./peers/peersBench.js";
export { freePort } from "./freePort.js";
export { runSoak, type SoakOptions, type SoakReport } from "./soak/soakRun.js";
export { soakText } from "./soak/soakText.js";
export { SOAK_DEFECTS, soakOptionsFromFlags } from "./soak/soakFlags.js";
