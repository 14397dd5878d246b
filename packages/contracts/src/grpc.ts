// Fully-qualified gRPC service names, e.g. for grpc.health.v1.Health per-service status (the gateway
// serves the standard Health service through the npm grpc-health-check package).

/** "attr_rag.v1.AttrRagService" */
export const ATTR_RAG_SERVICE_NAME = "attr_rag.v1.AttrRagService";

/** "attr_rag.v1.IndexService" */
export const INDEX_SERVICE_NAME = "attr_rag.v1.IndexService";

/** "attr_rag.v1.BatchService" */
export const BATCH_SERVICE_NAME = "attr_rag.v1.BatchService";

/** "attr_rag.v1.ClusterService" */
export const CLUSTER_SERVICE_NAME = "attr_rag.v1.ClusterService";

/** Every service of the API, for registering health status. */
export const GRPC_SERVICE_NAMES: readonly string[] = [ATTR_RAG_SERVICE_NAME, INDEX_SERVICE_NAME, BATCH_SERVICE_NAME, CLUSTER_SERVICE_NAME];
